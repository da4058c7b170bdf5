package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.security.authentication.LoginThrottle;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** /metrics counts logins by mechanism and outcome, throttled attempts and refusals, and names no user. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AuthMetricsTest {

    private static MongoClient client(SecuredProxy p, MongoCredential credential) {
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(p.uri("", "?serverSelectionTimeoutMS=5000&retryWrites=false&retryReads=false")));
        return MongoClients.create(credential == null ? b.build() : b.credential(credential).build());
    }

    private static String scrape(SecuredProxy p) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.proxy.metrics().writeTo(out);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void loginsThrottlingAndRefusalsAreCounted() throws Exception {
        try (SecuredProxy p = SecuredProxy.start(new LoginThrottle(Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofMinutes(10)))) {
            try (MongoClient alice = client(p, MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray()));
                 MongoClient old = client(p, MongoCredential.createScramSha1Credential("sha1only", "admin", "old-pw".toCharArray()));
                 MongoClient reader = client(p, MongoCredential.createCredential("reader", "shop", "reader-pw".toCharArray()))) {
                alice.getDatabase("shop").runCommand(new Document("ping", 1));
                old.getDatabase("shop").runCommand(new Document("ping", 1));
                assertThatThrownBy(() -> reader.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1)))
                        .isInstanceOf(MongoException.class);
            }
            try (MongoClient anonymous = client(p, null)) {
                assertThatThrownBy(() -> anonymous.getDatabase("shop").getCollection("orders").find().first()).isInstanceOf(MongoException.class);
            }
            for (int i = 0; i < 2; i++) {
                try (MongoClient wrong = client(p, MongoCredential.createScramSha256Credential("alice", "admin", "nope".toCharArray()))) {
                    assertThatThrownBy(() -> wrong.getDatabase("shop").runCommand(new Document("ping", 1))).isInstanceOf(MongoException.class);
                }
            }
            String metrics = scrape(p);
            assertThat(metrics).containsPattern("thermocline_proxy_logins_total\\{mechanism=\"SCRAM-SHA-256\",outcome=\"success\"} [2-9]")
                    .containsPattern("thermocline_proxy_logins_total\\{mechanism=\"SCRAM-SHA-1\",outcome=\"success\"} 1")
                    .containsPattern("thermocline_proxy_logins_total\\{mechanism=\"SCRAM-SHA-256\",outcome=\"failure\"} [2-9]")
                    .containsPattern("thermocline_proxy_login_attempts_throttled_total [1-9]")
                    .containsPattern("thermocline_proxy_authorization_failures_total\\{command=\"insert\",reason=\"privilege\"} 1")
                    .containsPattern("thermocline_proxy_authorization_failures_total\\{command=\"find\",reason=\"unauthenticated\"} 1")
                    .doesNotContain("alice").doesNotContain("reader").doesNotContain("nope");
        }
    }
}
