package io.thermocline.app;

import io.thermocline.config.ConfigLoader;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.server.ProxyServer;
import io.netty.util.ResourceLeakDetector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code thermocline proxy}: runs the MongoDB-wire proxy. Flags override the config file and the
 * {@code THERMOCLINE_*} environment; everything is validated by the one config loader.
 */
@Command(name = "proxy", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the Thermocline proxy: applications connect to it instead of their replica set.",
                "Settings come from --config (YAML or JSON), then THERMOCLINE_* environment variables",
                "(e.g. THERMOCLINE_TIERS_ARCHIVE_URI), then these flags. See docs/proxy.md."},
        exitCodeOnInvalidInput = 2)
public final class ProxyCommand implements Callable<Integer> {

    @Option(names = "--config", paramLabel = "FILE", description = "Config file (YAML or JSON).")
    Path config;

    @Option(names = "--listen", paramLabel = "HOST:PORT", description = "Address for MongoDB clients (default 0.0.0.0:27017).")
    String listen;

    @Option(names = "--archive-uri", paramLabel = "URI", description = "Connection string of the archive replica set (the existing one).")
    String archiveUri;

    @Option(names = "--fast-uri", paramLabel = "URI", description = "Connection string of the fast-tier replica set (omit for pass-through).")
    String fastUri;

    @Option(names = "--http", paramLabel = "HOST:PORT", description = "Address for /metrics and /health (default 0.0.0.0:9090).")
    String http;

    @Option(names = "--max-client-connections", paramLabel = "N", description = "Client connections accepted before new ones get an error (default 10000).")
    Integer maxClientConnections;

    @Option(names = "--archive-connection-budget", paramLabel = "N", description = "Backend connections per archive member for the whole fleet (default 100).")
    Integer archiveBudget;

    @Option(names = "--fast-connection-budget", paramLabel = "N", description = "Backend connections per fast-tier member for the whole fleet (default 100).")
    Integer fastBudget;

    @Option(names = "--instance-id", paramLabel = "ID", description = "This proxy's id in the fleet (default: $HOSTNAME); encoded in cursor ids.")
    String instanceId;

    @Option(names = "--replicas", paramLabel = "N", description = "Proxy replicas sharing the connection budgets (default 1).")
    Integer replicas;

    @Option(names = "--compressors", paramLabel = "LIST", split = ",", description = "Compressors offered to clients, in order (default zstd,snappy,zlib).")
    String[] compressors;

    @Option(names = "--transport", paramLabel = "NAME", description = "Network transport: auto (io_uring, else epoll, else nio), io_uring, epoll or nio (default auto).")
    String transport;

    @Option(names = "--read-consistency", paramLabel = "MODE", description = "What a read routed to the archive sees: linearizable (every write acknowledged before it, from any client or proxy; the default) or session (the session's own writes; lower latency). See docs/consistency.md.")
    String readConsistency;

    @Option(names = "--drain-timeout", paramLabel = "DURATION", description = "How long shutdown waits for requests in flight, e.g. 30s (default 30s).")
    String drainTimeout;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final Map<String, String> environment;

    public ProxyCommand() {
        this(System.getenv());
    }

    ProxyCommand(Map<String, String> environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() throws Exception {
        ThermoclineConfig loaded;
        try {
            loaded = loadConfig();
        } catch (InvalidConfigException e) {
            spec.commandLine().getErr().println("thermocline proxy: " + e.getMessage());
            return 2;
        }
        if (System.getProperty("io.netty.leakDetection.level") == null) {
            // Sampled leak tracking records a stack trace per traced buffer (about 2% of the proxy's
            // CPU in docs/benchmarks/proxy-ycsb.md); tests keep it, production turns it on by flag.
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.DISABLED);
        }
        ProxyServer proxy;
        try {
            proxy = ProxyServer.create(loaded).start();
        } catch (IOException e) {
            spec.commandLine().getErr().println("thermocline proxy: " + e.getMessage()
                    + " (the ports are set by --listen for clients, --http for /metrics, fleet.peerPort for peers)");
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            proxy.close();
            stopped.countDown();
        }, "thermocline-shutdown"));
        spec.commandLine().getOut().println("thermocline proxy listening on " + proxy.address()
                + (proxy.httpPort() >= 0 ? ", http on port " + proxy.httpPort() : ""));
        spec.commandLine().getOut().flush();
        stopped.await();
        return 0;
    }

    /** The validated config: file, then environment, then flags (as environment overrides, so one loader validates all). */
    ThermoclineConfig loadConfig() {
        Map<String, String> env = new HashMap<>(environment);
        if (listen != null) {
            HostPort hp = HostPort.parse("--listen", listen);
            env.put("THERMOCLINE_PROXY_LISTEN_HOST", hp.host());
            env.put("THERMOCLINE_PROXY_PORT", Integer.toString(hp.port()));
        }
        if (http != null) {
            HostPort hp = HostPort.parse("--http", http);
            env.put("THERMOCLINE_PROXY_HTTP_HOST", hp.host());
            env.put("THERMOCLINE_PROXY_HTTP_PORT", Integer.toString(hp.port()));
        }
        put(env, "THERMOCLINE_TIERS_ARCHIVE_URI", archiveUri);
        put(env, "THERMOCLINE_TIERS_FAST_URI", fastUri);
        put(env, "THERMOCLINE_PROXY_MAX_CLIENT_CONNECTIONS", maxClientConnections);
        put(env, "THERMOCLINE_TIERS_ARCHIVE_CONNECTION_BUDGET", archiveBudget);
        put(env, "THERMOCLINE_TIERS_FAST_CONNECTION_BUDGET", fastBudget);
        put(env, "THERMOCLINE_FLEET_INSTANCE_ID", instanceId);
        put(env, "THERMOCLINE_FLEET_REPLICAS", replicas);
        put(env, "THERMOCLINE_PROXY_DRAIN_TIMEOUT", drainTimeout);
        put(env, "THERMOCLINE_PROXY_TRANSPORT", transport);
        put(env, "THERMOCLINE_PROXY_READ_CONSISTENCY", readConsistency);
        if (compressors != null) {
            env.put("THERMOCLINE_PROXY_COMPRESSORS", String.join(",", compressors));
        }
        return config != null ? ConfigLoader.load(config, env) : ConfigLoader.fromEnvironment(env);
    }

    private static void put(Map<String, String> env, String key, Object value) {
        if (value != null) {
            env.put(key, value.toString());
        }
    }

    record HostPort(String host, int port) {
        static HostPort parse(String flag, String value) {
            int colon = value.lastIndexOf(':');
            try {
                if (colon > 0) {
                    return new HostPort(value.substring(0, colon), Integer.parseInt(value.substring(colon + 1)));
                }
                return new HostPort("0.0.0.0", Integer.parseInt(value));
            } catch (NumberFormatException e) {
                throw new InvalidConfigException(List.of(flag + ": '" + value + "' is not HOST:PORT or PORT; e.g. 127.0.0.1:27017"));
            }
        }
    }
}
