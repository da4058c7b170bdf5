package io.thermocline.proxy;

import static io.thermocline.proxy.TestCertificates.ca;
import static io.thermocline.proxy.TestCertificates.server;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerListener;
import io.netty.pkitesting.X509Bundle;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.topology.TierMonitor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The proxy reaches a tier that requires TLS and authentication, trusting only tls.tierCaFile and checking host names. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TierTlsTest {
    @TempDir
    Path dir;

    private EmbeddedReplicaSet tlsArchive(X509Bundle cert) throws Exception {
        Path certFile = Files.writeString(dir.resolve("archive.crt"), cert.getCertificatePathPEM());
        Path keyFile = Files.writeString(dir.resolve("archive.key"), cert.getPrivateKeyPEM());
        return EmbeddedReplicaSet.builder()
                .tls(certFile, keyFile)
                .requireAuthentication(true)
                .user("thermocline-proxy", "proxy-pw", "root")
                .build()
                .start();
    }

    private SecuredProxy proxy(EmbeddedReplicaSet archive, Path caFile) {
        return SecuredProxy.fromConfig(
                archive,
                archive.connectionString().replace("mongodb://", "mongodb://thermocline-proxy:proxy-pw@"),
                "auth:\n  mode: disabled\n  users: []\ntls:\n  tierCaFile: '" + caFile + "'\n");
    }

    @Test
    void trafficGoesOverTlsToATierSignedByTheConfiguredCa() throws Exception {
        X509Bundle ca = ca("tier-ca");
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        try (SecuredProxy p = proxy(tlsArchive(server(ca, "127.0.0.1", 1)), caFile);
                MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=5000"))) {
            c.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
            assertThat(c.getDatabase("shop").getCollection("orders").countDocuments())
                    .isEqualTo(1);
        }
    }

    @Test
    void aTierWithAnUntrustedCertificateOrAnotherHostNameIsNotUsed() throws Exception {
        Path otherCa =
                Files.writeString(dir.resolve("other.crt"), ca("someone-else").getRootCertificatePEM());
        try (SecuredProxy p = proxy(tlsArchive(server(ca("tier-ca"), "127.0.0.1", 1)), otherCa)) {
            assertThat(refusal(
                            p,
                            c -> c.getDatabase("shop").getCollection("orders").countDocuments()))
                    .contains(
                            "archive tier",
                            "TLS handshake failed: certificate rejected: ",
                            "unable to find valid certification path");
            // issue 41 item 4: /health/ready names the cause too (the operator carries it into ProxyReady)
            assertThat(p.proxy.readiness().ready()).isFalse();
            assertThat(p.proxy.readiness().reason())
                    .contains("no primary known for the archive tier", "TLS handshake failed: certificate rejected: ");
        }
        X509Bundle ca = ca("tier-ca");
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        try (SecuredProxy p = proxy(tlsArchive(server(ca, "db.example.com", 2)), caFile)) {
            assertThat(refusal(
                            p,
                            c -> c.getDatabase("shop").getCollection("orders").countDocuments()))
                    .contains("TLS handshake failed: certificate rejected: ")
                    .containsIgnoringCase("subject alternative names");
        }
    }

    /** Issue 25 item 8: tls=true in a tier URI without tls.tierCaFile is TLS (system trust store) or no connection, never plain text. */
    @Test
    void aTierUriAskingForTlsIsNeverReachedInPlainText() throws Exception {
        try (EmbeddedReplicaSet plainOnly = EmbeddedReplicaSet.startSingle();
                SecuredProxy p = SecuredProxy.fromConfig(
                        plainOnly, withTls(plainOnly.connectionString()), "auth:\n  mode: disabled\n  users: []\n")) {
            assertThat(refusal(
                            p,
                            c -> c.getDatabase("shop")
                                    .getCollection("cards")
                                    .insertOne(new Document("_id", "4111111111111111"))))
                    .contains("archive tier", "TLS handshake failed: the member does not speak TLS");
            try (MongoClient direct = MongoClients.create(plainOnly.connectionString())) {
                assertThat(direct.getDatabase("shop").getCollection("cards").countDocuments())
                        .as("nothing reached the tier in plain text")
                        .isZero();
            }
        }
        // a TLS tier whose CA the system trust store does not hold is refused too
        try (EmbeddedReplicaSet archive = tlsArchive(server(ca("private-ca"), "127.0.0.1", 3));
                SecuredProxy p = SecuredProxy.fromConfig(
                        archive,
                        withTls(archive.connectionString()
                                .replace("mongodb://", "mongodb://thermocline-proxy:proxy-pw@")),
                        "auth:\n  mode: disabled\n  users: []\n")) {
            assertThat(refusal(
                            p,
                            c -> c.getDatabase("shop").getCollection("orders").countDocuments()))
                    .contains(
                            "archive tier",
                            "TLS handshake failed: certificate rejected: ",
                            "unable to find valid certification path");
        }
    }

    /**
     * Runs {@code operation} through the proxy once it knows its archive tier cannot be reached and returns what the proxy answered the
     * client's handshake with: HostUnreachable (6) naming the cause. A proxy that never answers, or another error, fails. The
     * answer is taken as soon as the driver's monitor has it; the operation, which cannot have a server while the proxy
     * refuses every hello, is then ended by closing the client rather than by the server selection timeout.
     */
    private static String refusal(SecuredProxy p, Consumer<MongoClient> operation) throws Exception {
        // the proxy knows the outage first (no member answered for OUTAGE_CONFIRMED): its hello then waits 1 s for a
        // primary, not the full primary wait (5 s here), so each refusal takes about 3 s instead of 5
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (p.proxy
                .archiveOutOfServiceFor()
                .filter(d -> d.compareTo(TierMonitor.OUTAGE_CONFIRMED) >= 0)
                .isEmpty()) {
            assertThat(System.nanoTime())
                    .as("the proxy confirms the archive is unreachable")
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
        CompletableFuture<Throwable> answered = new CompletableFuture<>();
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(p.uri("", "?retryReads=false&retryWrites=false")))
                .applyToServerSettings(s -> s.addServerListener(new ServerListener() {
                    @Override
                    public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
                        if (event.getNewDescription().getException() != null) {
                            answered.complete(event.getNewDescription().getException());
                        } else if (event.getNewDescription().isOk()) {
                            answered.completeExceptionally(
                                    new AssertionError("the proxy answered hello: " + event.getNewDescription()));
                        }
                    }
                }))
                .build();
        CompletableFuture<Void> ran;
        Throwable seen;
        try (MongoClient c = MongoClients.create(settings)) {
            ran = CompletableFuture.runAsync(() -> operation.accept(c));
            seen = answered.get(60, TimeUnit.SECONDS);
            assertThat(ran)
                    .as("an operation while the proxy refuses every hello")
                    .isNotDone();
        }
        assertThatThrownBy(() -> ran.get(30, TimeUnit.SECONDS))
                .as("the operation ends with its client")
                .isInstanceOf(ExecutionException.class);
        assertThat(seen).isInstanceOf(MongoCommandException.class);
        MongoCommandException refused = (MongoCommandException) seen;
        assertThat(refused.getErrorCode()).as(refused.getMessage()).isEqualTo(6);
        return refused.getErrorMessage();
    }

    private static String withTls(String uri) {
        return uri + (uri.contains("?") ? "&" : uri.endsWith("/") ? "?" : "/?") + "tls=true";
    }
}
