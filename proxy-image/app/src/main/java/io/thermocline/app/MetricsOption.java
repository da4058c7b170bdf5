package io.thermocline.app;

import io.thermocline.proxy.http.HttpEndpoint;
import java.io.IOException;
import java.util.function.BooleanSupplier;
import picocli.CommandLine.Option;

/** A worker's {@code --metrics HOST:PORT}: where it serves /metrics and /health. A picocli mixin. */
final class MetricsOption {

    @Option(
            names = "--metrics",
            paramLabel = "HOST:PORT",
            description = "Serve /metrics, /health/live and /health/ready here (default: off).")
    String metrics;

    /** The endpoint, healthy while {@code running}; null when the flag is not given. */
    HttpEndpoint serve(BooleanSupplier running) throws IOException {
        return WorkerRuntime.metrics(metrics, running);
    }
}
