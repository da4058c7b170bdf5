package io.thermocline.proxy.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The HTTP port of every data-plane process (proxy, feeder, evictor, warmer), separate from the
 * MongoDB port: {@code /metrics} (Prometheus text), {@code /health/live} (the process does its
 * work) and {@code /health/ready} (it can serve now), each health answer 200 or 503 with the reason.
 */
public final class HttpEndpoint implements AutoCloseable {

    /** What {@code /metrics} answers. */
    public interface Scrape {
        String contentType();

        void writeTo(OutputStream out) throws IOException;

        /** The Prometheus text format of one registry (a worker's). */
        static Scrape of(PrometheusRegistry registry) {
            PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();
            return new Scrape() {
                @Override
                public String contentType() {
                    return writer.getContentType();
                }

                @Override
                public void writeTo(OutputStream out) throws IOException {
                    // a worker's own metrics and the JVM's and process's it runs in
                    io.prometheus.metrics.model.snapshots.MetricSnapshots.Builder all = io.prometheus.metrics.model.snapshots.MetricSnapshots.builder();
                    registry.scrape().forEach(all::metricSnapshot);
                    JvmAndProcessMetrics.registry().scrape().forEach(all::metricSnapshot);
                    writer.write(out, all.build());
                }
            };
        }
    }

    private final HttpServer server;
    private final ExecutorService executor;

    public HttpEndpoint(String host, int port, Scrape metrics, Supplier<Readiness> live, Supplier<Readiness> ready) throws IOException {
        server = HttpServer.create(new InetSocketAddress(host, port), 16);
        executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "thermocline-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", exchange -> {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            metrics.writeTo(body);
            respond(exchange, 200, metrics.contentType(), body.toByteArray());
        });
        server.createContext("/health/live", exchange -> health(exchange, "live", live.get()));
        server.createContext("/health/ready", exchange -> health(exchange, "ready", ready.get()));
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void health(HttpExchange exchange, String what, Readiness state) throws IOException {
        String body = (state.ready() ? what + (state.reason().isEmpty() ? "" : ", " + state.reason()) : "not " + what + ": " + state.reason()) + "\n";
        respond(exchange, state.ready() ? 200 : 503, "text/plain; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
    }

    private static void respond(HttpExchange exchange, int status, String contentType, byte[] body) throws IOException {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            exchange.getResponseHeaders().set("Content-Type", contentType);
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
