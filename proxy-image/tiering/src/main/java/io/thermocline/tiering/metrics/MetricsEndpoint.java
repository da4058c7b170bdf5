package io.thermocline.tiering.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;

/**
 * {@code /metrics} (Prometheus text format) and {@code /health/live} for a worker process
 * (feeder, evictor, warmer). The proxy has its own HTTP server; the workers need only this.
 */
public final class MetricsEndpoint implements AutoCloseable {

    private final HttpServer server;

    public MetricsEndpoint(String host, int port, PrometheusRegistry registry, BooleanSupplier live) throws IOException {
        server = HttpServer.create(new InetSocketAddress(host, port), 0);
        server.setExecutor(Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "thermocline-metrics-http");
            thread.setDaemon(true);
            return thread;
        }));
        PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
        server.createContext("/metrics", exchange -> {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            writer.write(body, registry.scrape());
            respond(exchange, 200, writer.getContentType(), body.toByteArray());
        });
        server.createContext("/health/live", exchange -> {
            boolean ok = live.getAsBoolean();
            respond(exchange, ok ? 200 : 503, "text/plain", (ok ? "live" : "worker stopped").getBytes(StandardCharsets.UTF_8));
        });
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
