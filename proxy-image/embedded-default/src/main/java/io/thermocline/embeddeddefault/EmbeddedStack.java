package io.thermocline.embeddeddefault;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.AuthConfig;
import io.thermocline.config.Durations;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.TierConfig;
import io.thermocline.config.TiersConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.embedded.storage.Storage;
import io.thermocline.proxy.server.ClientPort;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.WriteRefusals;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.warmer.Warmer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded default's parts, started in dependency order and stopped in reverse:
 * archive, fast tier, feeder (streaming before any user write), sample data, warmer,
 * evictor, proxy, status line. On stop the proxy drains first and the feeder is given
 * time to mirror everything; the fast tier is on disk (by default), so what it alone holds
 * (writes not mirrored yet, dead letters, retry records) survives a stop too.
 */
public final class EmbeddedStack implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedStack.class);

    /**
     * @param fastTierDir       where the fast tier keeps its data (null: {@code DATA_DIR/fast})
     * @param fastTierInMemory  keep the fast tier in memory instead (a stop then loses what only it holds: dead letters)
     * @param disk              how a directory becomes a replica set's storage (tests pass a {@code FullDisk})
     */
    public record Options(
            ThermoclineConfig template,
            Path dataDir,
            Path fastTierDir,
            boolean fastTierInMemory,
            int sampleDocuments,
            Duration statusEvery,
            Function<Path, Storage> disk) {

        public Options(
                ThermoclineConfig template, Path dataDir, Path fastTierDir, int sampleDocuments, Duration statusEvery) {
            this(template, dataDir, fastTierDir, false, sampleDocuments, statusEvery, Storage::directory);
        }

        public Options withDisk(Function<Path, Storage> storage) {
            return new Options(template, dataDir, fastTierDir, fastTierInMemory, sampleDocuments, statusEvery, storage);
        }

        Path fastDir() {
            return fastTierDir != null ? fastTierDir : dataDir.resolve("fast");
        }
    }

    /** Start-up failed in a way a person can fix (port taken, data directory unusable). */
    public static final class StartFailure extends Exception {
        StartFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final List<AutoCloseable> started = new ArrayList<>();
    private EmbeddedReplicaSet fast;
    private EmbeddedReplicaSet archive;
    private Feeder feeder;
    private ProxyServer proxy;
    /** The client port, open from the first step and answering "starting" until the proxy takes it over. */
    private ClientPort clientPort;

    private ThermoclineConfig config;
    private StatusLine status;
    private PrometheusRegistry workerMetrics;
    private PrintWriter out;
    private String fastWhere;

    private EmbeddedStack() {}

    public static EmbeddedStack start(Options options, PrintWriter out) throws StartFailure {
        EmbeddedStack stack = new EmbeddedStack();
        try {
            stack.startAll(options, out);
            return stack;
        } catch (StartFailure e) {
            stack.close();
            throw e;
        } catch (RuntimeException | IOException | InterruptedException e) {
            stack.close();
            throw new StartFailure("could not start: " + e.getMessage(), e);
        }
    }

    private void startAll(Options options, PrintWriter out) throws StartFailure, IOException, InterruptedException {
        this.out = out;
        ThermoclineConfig t = options.template();
        // opened first, as mongod opens its port before it is ready: a client started with the stack waits for it
        // (its driver sees a starting server) instead of failing on a refused connection for the tens of seconds the
        // tiers take to reopen their data
        try {
            clientPort = ClientPort.bind(
                    t.proxy().listenHost(), t.proxy().port(), t.proxy().transport());
        } catch (IOException e) {
            throw new StartFailure(
                    e.getMessage() + " (the ports are set by --port for clients, --http for /metrics)", e);
        }
        started.add(clientPort);
        out.printf(
                "MongoDB clients can connect to mongodb://%s:%d/ now: they wait until the stack is up%n",
                t.proxy().listenHost(), clientPort.address().getPort());
        Path archiveDir = options.dataDir().resolve("archive");
        try {
            Files.createDirectories(archiveDir);
        } catch (IOException e) {
            throw new StartFailure(
                    "data directory " + archiveDir.toAbsolutePath() + " cannot be created: " + e.getMessage()
                            + "; pass another with --data-dir",
                    e);
        }
        // each long step says what it does first: a restart reopens the archive's data, which takes seconds
        step(out, "starting the archive (on disk, " + archiveDir.toAbsolutePath() + "; a restart reopens its data)");
        archive = EmbeddedReplicaSet.builder()
                .name("archive")
                .members(1)
                .storage(options.disk().apply(archiveDir))
                .build()
                .start();
        started.add(archive);
        // on disk by default: what only the fast tier holds (writes not mirrored yet, dead letters, retry records)
        // survives a stop
        fastWhere = options.fastTierInMemory()
                ? "in memory"
                : options.fastDir().toAbsolutePath().toString();
        Storage fastStorage =
                options.fastTierInMemory() ? Storage.memory() : options.disk().apply(options.fastDir());
        step(
                out,
                "starting the fast tier (" + (options.fastTierInMemory() ? "in memory" : "on disk, " + fastWhere)
                        + ")");
        fast = EmbeddedReplicaSet.builder()
                .name("fast")
                .members(1)
                .storage(fastStorage)
                .build()
                .start();
        started.add(fast);

        config = new ThermoclineConfig(
                t.proxy(),
                new TiersConfig(
                        new TierConfig(fast.connectionString(), t.tiers().fast().connectionBudget()),
                        new TierConfig(
                                archive.connectionString(), t.tiers().archive().connectionBudget())),
                t.fleet(),
                t.collections(),
                t.feeder(),
                t.evictor(),
                t.warmer(),
                // The embedded default is a first try on one machine: no users to log in with (docs/security.md).
                AuthConfig.disabled(),
                t.tls());

        // The workers count into a registry of this stack's own, served on the proxy's /metrics.
        workerMetrics = new PrometheusRegistry();
        step(out, "starting the feeder (it mirrors the fast tier's writes to the archive)");
        // one instance name per worker across restarts: the one restarted takes its own lease back at once (the fast
        // tier keeps it)
        feeder = Feeder.start(
                config,
                Feeder.Options.defaults().withInstanceId("embedded-feeder").withRegistry(workerMetrics));
        started.add(feeder);
        if (!awaitStreaming()) {
            throw new StartFailure(
                    "the feeder did not start streaming the fast tier's changes within 30 s"
                            + writesRefused().map(cause -> " (" + cause + ")").orElse(""),
                    feeder.crash());
        }
        if (options.sampleDocuments() > 0 && writesRefused().isEmpty()) {
            step(out, "loading " + options.sampleDocuments() + " sample orders unless the archive holds them already");
            try (MongoClient client = MongoClients.create(archive.connectionString())) {
                int loaded = SampleData.loadInto(client, options.sampleDocuments(), Instant.now());
                if (loaded > 0) {
                    out.printf(
                            "loaded %d sample orders over the past year into the archive (%s)%n",
                            loaded, archiveDir.toAbsolutePath());
                }
            }
        }
        step(out, "starting the warmer, the archive follower and the evictor");
        started.add(Warmer.start(
                config,
                Warmer.Options.defaults().withInstanceId("embedded-warmer").withRegistry(workerMetrics)));
        // keeps the fast tier in step with the archive in shadow and drained mode (docs/adoption.md)
        com.mongodb.client.MongoClient followed = MongoClients.create(archive.connectionString());
        started.add(followed);
        io.thermocline.tiering.worker.TierClients followerClients =
                io.thermocline.tiering.worker.TierClients.open(config, "thermocline-follower");
        started.add(followerClients);
        started.add(new io.thermocline.tiering.mode.ArchiveFollower(
                        followerClients.fast(),
                        followed,
                        config.collections(),
                        config.fleet().instanceId(),
                        io.thermocline.tiering.mode.ArchiveFollower.Options.defaults(Duration.ofMillis(200))
                                .withRegistry(workerMetrics))
                .start());
        started.add(Evictor.start(
                config,
                Evictor.Options.defaults().withInstanceId("embedded-evictor").withRegistry(workerMetrics)));
        step(
                out,
                "starting the proxy on " + config.proxy().listenHost() + ":"
                        + clientPort.address().getPort());
        try {
            proxy = ProxyServer.create(config, clientPort);
            started.remove(clientPort); // the proxy owns the port from here, and closes it
            started.add(proxy);
            proxy.start();
        } catch (IOException e) {
            // CannotListen names the port that is taken and what it is for
            throw new StartFailure(
                    e.getMessage() + " (the ports are set by --port for clients, --http for /metrics)", e);
        }
        proxy.writeRefusals().add(new WriteRefusals.Check("archive", archive::writesRefused));
        proxy.writeRefusals().add(new WriteRefusals.Check("fast tier", fast::writesRefused));
        GaugeWithCallback.builder()
                .name("thermocline_storage_writes_refused")
                .help(
                        "1 while a tier's storage refuses writes (disk full, read-only): the proxy refuses writes and is not ready")
                .labelNames("tier")
                .callback(cb -> {
                    cb.call(archive.writesRefused().isPresent() ? 1 : 0, "archive");
                    cb.call(fast.writesRefused().isPresent() ? 1 : 0, "fast");
                })
                .register(workerMetrics);
        proxy.metrics().alsoExpose(workerMetrics);
        Optional<String> refused = writesRefused();
        out.printf(
                refused.map(cause -> "Thermocline embedded default started, but REFUSES WRITES: "
                                        + cause.replace("%", "%%") + "%n")
                                .orElse("Thermocline embedded default is up.%n")
                        + "  MongoDB clients: mongodb://%s:%d/  (try: mongosh mongodb://localhost:%d/%s)%n"
                        + "  metrics: http://%s:%d/metrics%n  fast tier %s (%s)%n  archive   %s (%s)%n  tiered: %s.%s by %s, window %s%n",
                config.proxy().listenHost(),
                proxy.port(),
                proxy.port(),
                SampleData.DATABASE,
                config.proxy().httpHost(),
                proxy.httpPort(),
                fast.connectionString(),
                fastWhere,
                archive.connectionString(),
                archiveDir,
                SampleData.DATABASE,
                SampleData.COLLECTION,
                SampleData.AGE_FIELD,
                Durations.format(config.collections().get(0).hotWindow()));
        out.flush();
        if (!options.statusEvery().isZero()) {
            status = StatusLine.start(
                    options.statusEvery(), fast.connectionString(), archive.connectionString(), this, feeder, out);
            started.add(status);
        }
    }

    /** Waits for the feeder to stream, giving up at once when a tier refuses writes (the feeder cannot checkpoint then). */
    private boolean awaitStreaming() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < deadline) {
            if (feeder.awaitStreaming(Duration.ofMillis(500))) {
                return true;
            }
            if (writesRefused().isPresent()) {
                return false;
            }
        }
        return false;
    }

    /** Says what the stack does now, to the person watching and to clients that connect meanwhile. */
    private void step(PrintWriter out, String what) {
        out.println(what + " ...");
        out.flush();
        if (clientPort != null) {
            clientPort.stage(what);
        }
    }

    public int proxyPort() {
        return proxy.port();
    }

    /** The port of /metrics and /health (the proxy's HTTP endpoint). */
    public int httpPort() {
        return proxy.httpPort();
    }

    /** The registries this stack's /metrics serves: the proxy's and the tiering workers'. */
    List<PrometheusRegistry> registries() {
        return List.of(proxy.metrics().registry(), workerMetrics);
    }

    /** Reads the proxy routed to one tier so far (what the status line shows). */
    public long readsServedBy(RoutingMetrics.Served tier) {
        return proxy.tieredRouting().map(r -> r.metrics().count("read", tier)).orElse(0L);
    }

    public ThermoclineConfig config() {
        return config;
    }

    /** Why a tier refuses writes ("archive: disk full: ..."), if one does. */
    public Optional<String> writesRefused() {
        if (archive != null && archive.writesRefused().isPresent()) {
            return Optional.of("archive: " + archive.writesRefused().get());
        }
        if (fast != null && fast.writesRefused().isPresent()) {
            return Optional.of("fast tier: " + fast.writesRefused().get());
        }
        return Optional.empty();
    }

    /** Stops in reverse order; the proxy first, then the feeder gets to mirror what it has not yet. */
    @Override
    public synchronized void close() {
        if (status != null) {
            closeQuietly(status);
            started.remove(status);
        }
        if (proxy != null) {
            closeQuietly(proxy);
            started.remove(proxy);
        }
        if (feeder != null && fast != null) {
            new FinalMirror(fast, feeder, fastWhere, this::writesRefused, out).awaitThenWarn();
        }
        for (int i = started.size() - 1; i >= 0; i--) {
            closeQuietly(started.get(i));
        }
        started.clear();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn(
                    "event=embedded_stop_error part={} error=\"{}\"",
                    c.getClass().getSimpleName(),
                    e.toString());
        }
    }
}
