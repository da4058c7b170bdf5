package io.thermocline.operator.proxy;

import jakarta.enterprise.context.ApplicationScoped;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;

/** Asks the pod over HTTP, bounded to 2 s, so a reconcile never waits long on a pod that does not answer. */
@ApplicationScoped
public class HttpProxyHealth implements ProxyHealth {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final int NOT_READY = 503;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    @Override
    public Optional<String> notReady(String host, int port) {
        String authority = host.contains(":") ? "[" + host + "]:" + port : host + ":" + port; // an IPv6 pod address
        try {
            HttpResponse<String> response = http.send(
                    HttpRequest.newBuilder(URI.create("http://" + authority + "/health/ready"))
                            .timeout(TIMEOUT)
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == NOT_READY && !response.body().isBlank()
                    ? Optional.of(response.body().strip())
                    : Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // not listening yet, or unreachable from the operator: the pods' events say more
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
