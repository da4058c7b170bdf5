package io.thermocline.app;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.http.HttpEndpoint;
import io.thermocline.proxy.http.Readiness;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** What the feeder, evictor and warmer commands share: loading the config, /metrics, waiting for SIGTERM. */
final class WorkerRuntime {

    private WorkerRuntime() {
    }

    /** The validated config, or null after printing every problem (exit code 2). */
    static ThermoclineConfig load(String command, Path config, Map<String, String> env, PrintWriter err) {
        if (config == null) {
            err.println("thermocline " + command + ": --config FILE is required (the same YAML or JSON the proxy uses)");
            return null;
        }
        try {
            ThermoclineConfig loaded = ConfigLoader.load(config, env);
            if (!loaded.tiers().tiered()) {
                err.println("thermocline " + command + ": tiers.fast.uri is not set: the workers need a fast tier; set tiers.fast.uri or THERMOCLINE_TIERS_FAST_URI");
                return null;
            }
            if (loaded.collections().isEmpty()) {
                err.println("thermocline " + command + ": collections is empty: nothing is tiered; add a collection policy (database, collection, ageField, hotWindow)");
                return null;
            }
            return loaded;
        } catch (InvalidConfigException e) {
            err.println("thermocline " + command + ": " + e.getMessage());
            return null;
        }
    }

    /** Serves /metrics and /health on {@code hostPort} ("host:port"; null: none); healthy while {@code running}. */
    static HttpEndpoint metrics(String hostPort, BooleanSupplier running) throws IOException {
        if (hostPort == null) {
            return null;
        }
        int colon = hostPort.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("--metrics: expected HOST:PORT, got '" + hostPort + "'");
        }
        Supplier<Readiness> health = () -> running.getAsBoolean() ? Readiness.YES : Readiness.not("worker stopped");
        return new HttpEndpoint(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)),
                HttpEndpoint.Scrape.of(PrometheusRegistry.defaultRegistry), health, health);
    }

    /** Blocks until the JVM is asked to stop, then closes {@code worker}. */
    static void runUntilStopped(AutoCloseable worker, HttpEndpoint metrics) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            closeQuietly(worker);
            closeQuietly(metrics);
            stopped.countDown();
        }, "thermocline-shutdown"));
        stopped.await();
    }

    static void closeQuietly(AutoCloseable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (Exception ignored) {
            // shutting down: nothing left to report to
        }
    }
}
