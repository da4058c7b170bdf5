package io.thermocline.proxy.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.thermocline.proxy.metrics.ProxyMetrics;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The proxy's HTTP port, separate from the MongoDB port: {@code /metrics} (Prometheus text),
 * {@code /health/live} (the process answers) and {@code /health/ready} (a backend primary is known).
 */
public final class HttpEndpoints implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService executor;

    public HttpEndpoints(String host, int port, ProxyMetrics metrics, Supplier<Readiness> readiness) throws IOException {
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
        server.createContext("/health/live", exchange ->
                respond(exchange, 200, "text/plain; charset=utf-8", "live\n".getBytes(StandardCharsets.UTF_8)));
        server.createContext("/health/ready", exchange -> {
            Readiness r = readiness.get();
            respond(exchange, r.ready() ? 200 : 503, "text/plain; charset=utf-8",
                    ((r.ready() ? "ready" : "not ready: " + r.reason()) + "\n").getBytes(StandardCharsets.UTF_8));
        });
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
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
