package io.thermocline.proxy.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class HttpEndpointTest {

    final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    HttpResponse<String> send(int port, String method, String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void servesAWorkersRegistryAndReportsItStoppedWithTheReason() throws Exception {
        PrometheusRegistry registry = new PrometheusRegistry();
        Counter.builder().name("thermocline_test_events").help("test").register(registry).inc(3);
        AtomicBoolean running = new AtomicBoolean(true);
        try (HttpEndpoint endpoint = new HttpEndpoint("127.0.0.1", 0, HttpEndpoint.Scrape.of(registry),
                () -> running.get() ? Readiness.YES : Readiness.not("worker stopped"), () -> Readiness.not("no primary"))) {
            HttpResponse<String> metrics = send(endpoint.port(), "GET", "/metrics");
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.body()).contains("thermocline_test_events_total 3.0")
                    .as("a worker's endpoint shows its JVM and process too").contains("jvm_memory_used_bytes", "process_cpu_seconds_total");
            assertThat(metrics.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("text/plain"));

            assertThat(send(endpoint.port(), "GET", "/health/live").statusCode()).isEqualTo(200);
            running.set(false);
            HttpResponse<String> live = send(endpoint.port(), "GET", "/health/live");
            assertThat(live.statusCode()).isEqualTo(503);
            assertThat(live.body()).isEqualTo("not live: worker stopped\n");
            HttpResponse<String> ready = send(endpoint.port(), "GET", "/health/ready");
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).isEqualTo("not ready: no primary\n");
        }
    }

    @Test
    void anythingButGetOrHeadIsRefused() throws Exception {
        try (HttpEndpoint endpoint = new HttpEndpoint("127.0.0.1", 0, HttpEndpoint.Scrape.of(new PrometheusRegistry()),
                () -> Readiness.YES, () -> Readiness.YES)) {
            assertThat(send(endpoint.port(), "POST", "/metrics").statusCode()).isEqualTo(405);
            assertThat(send(endpoint.port(), "HEAD", "/health/ready").statusCode()).isEqualTo(200);
        }
    }
}
