package io.thermocline.proxy;

import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.embedded.EmbeddedReplicaSet;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The proxy's pooled connections log in to a tier that requires authentication, with the credentials of its URI. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TierLoginTest {

    private static SecuredProxy proxyInFrontOf(EmbeddedReplicaSet archive, String credentials) {
        return SecuredProxy.fromConfig(archive, archive.connectionString().replace("mongodb://", "mongodb://" + credentials + "@"),
                "auth:\n  mode: disabled\n  users: []\n");
    }

    @Test
    void trafficReachesAnArchiveThatRequiresAuthenticationAsTheDataPlanesUser() throws Exception {
        EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().requireAuthentication(true).user("thermocline-proxy", "proxy-pw", "root")
                .build().start();
        try (SecuredProxy p = proxyInFrontOf(archive, "thermocline-proxy:proxy-pw");
             MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=5000"))) {
            c.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
            assertThat(c.getDatabase("shop").getCollection("orders").countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void aWrongDataPlanePasswordIsAClearErrorNotASilentUnauthenticatedConnection() throws Exception {
        EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().requireAuthentication(true).user("thermocline-proxy", "proxy-pw", "root")
                .build().start();
        try (SecuredProxy p = proxyInFrontOf(archive, "thermocline-proxy:wrong");
             MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=5000&retryReads=false"))) {
            assertThatThrownBy(() -> c.getDatabase("shop").getCollection("orders").countDocuments())
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorMessage()).contains("thermocline-proxy@admin could not log in").doesNotContain("wrong");
                        assertThat(e.getErrorCode()).isEqualTo(6);
                    });
        }
    }

    /** Issue 25 item 9: wrong credentials in the archive URI make the proxy not ready, the cause in /health/ready, no password. */
    @Test
    void wrongArchiveCredentialsMakeTheProxyNotReadyWithTheCause() throws Exception {
        EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder().requireAuthentication(true).user("thermocline-proxy", "proxy-pw", "root")
                .build().start();
        // closing the proxy closes its archive (SecuredProxy)
        try (SecuredProxy p = proxyInFrontOf(archive, "thermocline-proxy:wrong")) {
            await().atMost(Duration.ofSeconds(30)).until(() -> p.proxy.readiness().reason().contains("refused"));
            HttpResponse<String> ready = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + p.proxy.httpPort() + "/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).contains("archive tier refused the proxy's login").contains("thermocline-proxy@admin could not log in")
                    .doesNotContain("wrong");
        }
        EmbeddedReplicaSet another = EmbeddedReplicaSet.builder().requireAuthentication(true).user("thermocline-proxy", "proxy-pw", "root")
                .build().start();
        try (SecuredProxy p = proxyInFrontOf(another, "thermocline-proxy:proxy-pw")) {
            await().atMost(Duration.ofSeconds(30)).until(() -> p.proxy.readiness(), r -> r.ready());
        }
    }
}
