package io.thermocline.proxy;

import io.thermocline.config.ConfigLoader;
import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.fleet.FleetSettings;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Proxy replicas of one fleet in this JVM, in front of one archive: they find each other through a
 * shared list of peer addresses (as the headless Service's DNS would list them) and share a secret.
 */
final class ProxyFleet implements AutoCloseable {
    private final String archiveUri;
    private final int budget;
    private final Path secret;
    private final List<InetSocketAddress> peerAddresses = new CopyOnWriteArrayList<>();
    private final List<ProxyServer> running = new CopyOnWriteArrayList<>();
    private int started;
    private int peerConnections = io.thermocline.config.FleetConfig.DEFAULT_PEER_CONNECTIONS;
    private Duration poolWait = Duration.ofSeconds(10);

    ProxyFleet(String archiveUri, int budget) {
        this(archiveUri, budget, secretFile("fleet-secret-of-this-test-0123456789"));
    }

    ProxyFleet(String archiveUri, int budget, Path secret) {
        this.archiveUri = archiveUri;
        this.budget = budget;
        this.secret = secret;
    }

    static Path secretFile(String content) {
        try {
            Path p = Files.createTempFile("thermocline-fleet", ".secret");
            Files.writeString(p, content + "\n");
            p.toFile().deleteOnExit();
            return p;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The bound on each replica's connections to each peer, for the replicas started from now on. */
    ProxyFleet peerConnections(int perPeer) {
        this.peerConnections = perPeer;
        return this;
    }

    /** How long a request waits for a pooled connection, to a member or a peer, in the replicas started from now on. */
    ProxyFleet poolWait(Duration wait) {
        this.poolWait = wait;
        return this;
    }

    /** Starts one more replica, which joins the list its peers resolve. */
    ProxyServer startReplica() {
        return startReplica(secret);
    }

    ProxyServer startReplica(Path secretFile) {
        return startReplica(secretFile, null);
    }

    /** A replica with its own client security ({@code null}: the settings' own). */
    ProxyServer startReplica(Path secretFile, ProxySecurity security) {
        String id = "fleet-proxy-" + (started++);
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "tiers:\n  archive:\n    uri: '" + archiveUri + "'\n    connectionBudget: " + budget + "\n"
                + "fleet:\n  instanceId: " + id + "\n";
        ProxySettings settings = ProxySettings.from(ConfigLoader.parse(yaml, Map.of()))
                .withTimeouts(poolWait, Duration.ofSeconds(5), Duration.ofMillis(100))
                .withFleet(new FleetSettings(
                        "127.0.0.1", 0, () -> List.copyOf(peerAddresses), secretFile, peerConnections));
        try {
            ProxyServer proxy =
                    (security == null ? new ProxyServer(settings) : new ProxyServer(settings, null, security)).start();
            peerAddresses.add(new InetSocketAddress(
                    "127.0.0.1", proxy.fleet().orElseThrow().peerPort()));
            running.add(proxy);
            return proxy;
        } catch (Exception e) {
            throw new IllegalStateException("proxy replica did not start", e);
        }
    }

    /** Stops a replica the way a pod goes away: it drains and closes; its peer address stays listed until DNS drops it. */
    void stop(ProxyServer proxy) {
        running.remove(proxy);
        proxy.close();
    }

    List<ProxyServer> running() {
        return new ArrayList<>(running);
    }

    /** Documents {@code {_id: 0..n-1}} in {@code app.items}, written through {@code uri}. */
    static void insertItems(String uri, int n) {
        try (com.mongodb.client.MongoClient client = com.mongodb.client.MongoClients.create(uri)) {
            client.getDatabase("app")
                    .getCollection("items")
                    .insertMany(java.util.stream.IntStream.range(0, n)
                            .mapToObj(i -> new org.bson.Document("_id", i))
                            .toList());
        }
    }

    /** Waits until every running replica sees {@code n} live replicas. */
    void awaitLive(int n) {
        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .untilAsserted(() -> running()
                        .forEach(p -> org.assertj.core.api.Assertions.assertThat(
                                        p.fleet().orElseThrow().live())
                                .hasSize(n)));
    }

    static String uri(ProxyServer proxy) {
        return "mongodb://127.0.0.1:" + proxy.port();
    }

    /** The backend connections a replica holds open to the archive, from its metrics. */
    static long openBackendConnections(ProxyServer proxy) {
        return metric(proxy, "thermocline_proxy_pool_connections{", "state=\"open\"");
    }

    static long openCursors(ProxyServer proxy) {
        return metric(proxy, "thermocline_proxy_open_cursors ", "");
    }

    private static long metric(ProxyServer proxy, String prefix, String having) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            proxy.metrics().writeTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString()
                .lines()
                .filter(l -> l.startsWith(prefix) && l.contains(having))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    @Override
    public void close() {
        running.forEach(ProxyServer::close);
        running.clear();
    }
}
