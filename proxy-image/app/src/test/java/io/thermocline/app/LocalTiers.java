package io.thermocline.app;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.mode.ArchiveFollower;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.TierClients;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import org.bson.Document;

/**
 * A fast tier and an archive, each an embedded replica set, and the config file that names them
 * ({@code thermocline.yaml}: the proxy on 127.0.0.1 with ports of its choosing, no client
 * authentication, {@code shop.orders} tiered by {@code createdAt} with a 1 h window), as the
 * {@code thermocline} commands read it; with {@link #startDataPlane} the processes that run on them.
 */
final class LocalTiers implements AutoCloseable {

    final EmbeddedReplicaSet fast;
    final EmbeddedReplicaSet archive;
    final Path config;
    /** Clients of the tiers themselves, to set up and to look. */
    final MongoClient fastClient;

    final MongoClient archiveClient;

    private LocalTiers(EmbeddedReplicaSet fast, EmbeddedReplicaSet archive, Path config) {
        this.fast = fast;
        this.archive = archive;
        this.config = config;
        this.fastClient = MongoClients.create(fast.connectionString());
        this.archiveClient = MongoClients.create(archive.connectionString());
    }

    static LocalTiers start(Path dir) throws IOException {
        return start(dir, "");
    }

    /** @param moreYaml further top-level settings of the config file, e.g. {@code "shadow: {sampleRate: 1}\n"} */
    static LocalTiers start(Path dir, String moreYaml) throws IOException {
        EmbeddedReplicaSet fast =
                EmbeddedReplicaSet.builder().name("fast").build().start();
        try {
            EmbeddedReplicaSet archive =
                    EmbeddedReplicaSet.builder().name("archive").build().start();
            try {
                Path config = Files.writeString(
                        dir.resolve("thermocline.yaml"),
                        "proxy: {listenHost: 127.0.0.1, port: 0, httpHost: 127.0.0.1, httpPort: 0}\n"
                                + "tiers:\n  archive: {uri: '" + archive.connectionString() + "'}\n  fast: {uri: '"
                                + fast.connectionString() + "'}\n"
                                + "auth: {mode: disabled}\n"
                                + moreYaml
                                + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n");
                return new LocalTiers(fast, archive, config);
            } catch (IOException | RuntimeException | Error e) {
                archive.close();
                throw e;
            }
        } catch (IOException | RuntimeException | Error e) {
            fast.close();
            throw e;
        }
    }

    /** The config file as the commands load it (no environment). */
    ThermoclineConfig loaded() {
        return ConfigLoader.load(config, Map.of());
    }

    static MongoCollection<Document> orders(MongoClient client) {
        return client.getDatabase("shop").getCollection("orders");
    }

    /**
     * The data plane on these tiers: a proxy, the feeder, the warmer (re-checking every 200 ms) and the archive
     * follower ({@code followerId}, polling every 50 ms).
     */
    DataPlane startDataPlane(String followerId) throws Exception {
        return new DataPlane(loaded(), archive.connectionString(), followerId);
    }

    static final class DataPlane implements AutoCloseable {
        final ProxyServer proxy;
        final Feeder feeder;
        final Warmer warmer;
        /** The workers' clients, the follower's among them. */
        final TierClients workers;

        /** What has started, the latest first: closed in that order, also when a later start fails. */
        private final Deque<AutoCloseable> started = new ArrayDeque<>();

        private DataPlane(ThermoclineConfig loaded, String archiveUri, String followerId) throws Exception {
            try {
                proxy = started(ProxyServer.create(loaded).start());
                feeder =
                        started(Feeder.start(loaded, Feeder.Options.defaults().withRegistry(new PrometheusRegistry())));
                warmer = started(Warmer.start(
                        loaded,
                        Warmer.Options.defaults()
                                .withRegistry(new PrometheusRegistry())
                                .withRecheckInterval(Duration.ofMillis(200))));
                workers = started(TierClients.open(loaded, "test-workers"));
                MongoClient followed = started(MongoClients.create(archiveUri));
                started(new ArchiveFollower(
                                workers.fast(), followed, loaded.collections(), followerId, Duration.ofMillis(50))
                        .start());
            } catch (Exception | Error e) {
                try {
                    close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
        }

        private <T extends AutoCloseable> T started(T process) {
            started.push(process);
            return process;
        }

        /** A client of the proxy, as an application connects ({@code options}: the URI's query). */
        MongoClient application(String options) {
            return MongoClients.create("mongodb://127.0.0.1:" + proxy.port() + "/?" + options);
        }

        @Override
        public void close() throws Exception {
            Exception first = null;
            while (!started.isEmpty()) {
                try {
                    started.pop().close();
                } catch (Exception e) { // close the rest regardless, as try-with-resources does
                    if (first == null) {
                        first = e;
                    } else {
                        first.addSuppressed(e);
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        }
    }

    @Override
    public void close() {
        fastClient.close();
        archiveClient.close();
        fast.close();
        archive.close();
    }
}
