package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.http.HttpEndpoint;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * What the feeder, evictor and warmer commands share: the config ({@link ConfigSource}), {@code --metrics}, and
 * running a worker until the JVM is asked to stop.
 */
abstract class WorkerCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    final ConfigSource source;

    @Option(
            names = "--metrics",
            paramLabel = "HOST:PORT",
            description = "Serve /metrics, /health/live and /health/ready here (default: off).")
    String metrics;

    WorkerCommand(Map<String, String> environment) {
        source = new ConfigSource(environment);
    }

    @Override
    public final Integer call() throws Exception {
        ThermoclineConfig loaded = source.load();
        return loaded == null ? 2 : run(loaded);
    }

    /** The command's work on a valid config; its exit code. */
    abstract int run(ThermoclineConfig loaded) throws Exception;

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    /**
     * Serves {@code --metrics} (healthy while {@code running}), prints {@code started} when not null, and blocks
     * until the JVM is asked to stop, then closes {@code worker}: exit code 0.
     */
    int runUntilStopped(AutoCloseable worker, BooleanSupplier running, String started)
            throws IOException, InterruptedException {
        HttpEndpoint endpoint = WorkerRuntime.metrics(metrics, running);
        if (started != null) {
            out().println(started);
            out().flush();
        }
        WorkerRuntime.runUntilStopped(worker, endpoint);
        return 0;
    }
}
