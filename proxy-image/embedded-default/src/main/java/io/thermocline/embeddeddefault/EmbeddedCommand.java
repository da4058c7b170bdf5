package io.thermocline.embeddeddefault;

import io.thermocline.config.ConfigLoader;
import io.thermocline.config.Durations;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.storage.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code thermocline embedded}: the whole tiered stack in one process, for a first try.
 * A demo and test substrate, not a production deployment: see docs/embedded-default.md.
 */
@Command(name = "embedded", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Run the whole tiered stack in one process, with sample data: a first try, not production.",
                "A fast tier and an archive (both on disk), the proxy, the feeder, evictor and warmer,",
                "and a sample data set spread over a year.",
                "Connect any MongoDB client to the proxy, e.g. mongosh mongodb://localhost:27017/demo"},
        exitCodeOnInvalidInput = 2)
public final class EmbeddedCommand implements Callable<Integer> {

    @Option(names = "--port", paramLabel = "PORT", description = "Proxy port for MongoDB clients (default 27017).")
    int port = 27017;

    @Option(names = "--bind", paramLabel = "HOST", description = "Proxy address (default 127.0.0.1: only this machine).")
    String bind = "127.0.0.1";

    @Option(names = "--http", paramLabel = "HOST:PORT", description = "Address for /metrics and /health (default 127.0.0.1:9090).")
    String http = "127.0.0.1:9090";

    @Option(names = "--data-dir", paramLabel = "DIR", description = "Where the archive keeps its data across restarts (default ./thermocline-data).")
    Path dataDir = Path.of("thermocline-data");

    @Option(names = "--fast-tier-dir", paramLabel = "DIR", description = "Where the fast tier keeps its data (default DATA_DIR/fast).")
    Path fastTierDir;

    @Option(names = "--fast-tier-in-memory", description = "Keep the fast tier in memory: a stop then loses what only it holds (dead letters, retry records).")
    boolean fastTierInMemory;

    @Option(names = "--sample-documents", paramLabel = "N", description = "Orders in the sample data set, loaded once into an empty archive (default 20000; 0: none).")
    int sampleDocuments = 20_000;

    @Option(names = "--hot-window", paramLabel = "DURATION", description = "Window of demo.orders kept in the fast tier (default 30d).")
    String hotWindow = "30d";

    @Option(names = "--evict-every", paramLabel = "DURATION", description = "Evictor pass interval (default 30s).")
    String evictEvery = "30s";

    @Option(names = "--status-every", paramLabel = "DURATION", description = "Status line interval (default 2s; 0s: no status line).")
    String statusEvery = "2s";

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        EmbeddedStack.Options options;
        try {
            options = options();
        } catch (InvalidConfigException | IllegalArgumentException e) {
            spec.commandLine().getErr().println("thermocline embedded: " + e.getMessage());
            return 2;
        }
        EmbeddedStack stack;
        try {
            stack = EmbeddedStack.start(options, spec.commandLine().getOut());
        } catch (EmbeddedStack.StartFailure e) {
            spec.commandLine().getErr().println("thermocline embedded: " + e.getMessage());
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stack.close();
            stopped.countDown();
        }, "thermocline-shutdown"));
        stopped.await();
        return 0;
    }

    EmbeddedStack.Options options() {
        if (sampleDocuments < 0) {
            throw new IllegalArgumentException("--sample-documents: must be 0 or more");
        }
        // The policy and proxy settings go through the same loader and validation as a config file.
        Map<String, String> env = new HashMap<>();
        env.put("THERMOCLINE_PROXY_LISTEN_HOST", bind);
        env.put("THERMOCLINE_PROXY_PORT", Integer.toString(port));
        int colon = http.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("--http: expected HOST:PORT, got '" + http + "'");
        }
        env.put("THERMOCLINE_PROXY_HTTP_HOST", http.substring(0, colon));
        env.put("THERMOCLINE_PROXY_HTTP_PORT", http.substring(colon + 1));
        env.put("THERMOCLINE_FLEET_INSTANCE_ID", "embedded");
        env.put("THERMOCLINE_EVICTOR_INTERVAL", evictEvery);
        // Placeholders: the tiers' real addresses exist only once their members are listening.
        env.put("THERMOCLINE_TIERS_FAST_URI", "mongodb://127.0.0.1:1");
        env.put("THERMOCLINE_TIERS_ARCHIVE_URI", "mongodb://127.0.0.1:1");
        env.put("THERMOCLINE_COLLECTIONS", "[{database: " + SampleData.DATABASE + ", collection: " + SampleData.COLLECTION
                + ", ageField: " + SampleData.AGE_FIELD + ", hotWindow: " + hotWindow + "}]");
        ThermoclineConfig template = ConfigLoader.fromEnvironment(env);
        Duration status = Durations.parse(statusEvery);
        return new EmbeddedStack.Options(template, dataDir, fastTierDir, fastTierInMemory, sampleDocuments, status, Storage::directory);
    }
}
