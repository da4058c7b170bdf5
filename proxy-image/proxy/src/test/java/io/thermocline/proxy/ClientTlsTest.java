package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.netty.pkitesting.X509Bundle;
import io.thermocline.config.TlsConfig;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.tls.PemTrust;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.thermocline.proxy.TestCertificates.ca;
import static io.thermocline.proxy.TestCertificates.server;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** TLS from clients to the proxy: SCRAM over TLS, plain text refused, untrusted certificates refused, rotation under live connections. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ClientTlsTest {
    @TempDir
    Path dir;

    /** Writes the chain and key where the proxy reads them; a later write gets a later modification time. */
    private void install(X509Bundle cert, Path certFile, Path keyFile) throws Exception {
        Files.writeString(certFile, cert.getCertificatePathPEM());
        Files.writeString(keyFile, cert.getPrivateKeyPEM());
        FileTime later = FileTime.from(Instant.now().plusSeconds(Files.exists(dir.resolve("stamp")) ? 10 : 0));
        Files.setLastModifiedTime(certFile, later);
        Files.setLastModifiedTime(keyFile, later);
        Files.writeString(dir.resolve("stamp"), "x");
    }

    private Path pem(X509Bundle ca, String name) throws Exception {
        return Files.writeString(dir.resolve(name), ca.getRootCertificatePEM());
    }

    private static MongoClient client(SecuredProxy p, Path caFile, String credentials) {
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(p.uri("", "?tls=true&serverSelectionTimeoutMS=3000")))
                .applyToSslSettings(ssl -> ssl.enabled(true).context(PemTrust.sslContext(caFile)));
        if (!credentials.isEmpty()) {
            String[] up = credentials.split(":");
            b.credential(MongoCredential.createScramSha256Credential(up[0], "admin", up[1].toCharArray()));
        }
        return MongoClients.create(b.build());
    }

    private static SSLSocket tlsSocket(int port, Path caFile) throws Exception {
        SSLContext context = PemTrust.sslContext(caFile);
        SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("127.0.0.1", port);
        socket.startHandshake();
        return socket;
    }

    /** A new CA, and a certificate it signs for 127.0.0.1 installed as tls.crt / tls.key; returns the CA. */
    private X509Bundle installCertificateOfTestCa() throws Exception {
        X509Bundle ca = ca("test-ca");
        install(server(ca, "127.0.0.1", 1), dir.resolve("tls.crt"), dir.resolve("tls.key"));
        return ca;
    }

    private ClientTls tls(String mode, Path cert, Path key) {
        return ClientTls.from(new TlsConfig(mode, cert.toString(), key.toString(), null, null));
    }

    @Test
    void scramOverTlsWorksAndPlainTextIsRefusedWhenTlsIsRequired() throws Exception {
        Path caFile = pem(installCertificateOfTestCa(), "ca.crt");
        try (SecuredProxy p = SecuredProxy.withTls(tls("requireTLS", dir.resolve("tls.crt"), dir.resolve("tls.key")))) {
            try (MongoClient c = client(p, caFile, "alice:alice-pw")) {
                c.getDatabase("shop").getCollection("tls").insertOne(new Document("over", "tls"));
                assertThat(c.getDatabase("shop").getCollection("tls").countDocuments()).isEqualTo(1);
            }
            // A plain-text hello gets no answer: the connection is closed.
            try (WireClient plain = new WireClient(p.proxy.port())) {
                plain.sendRaw(io.thermocline.wire.WireCodec.encodeToBytes(new io.thermocline.wire.Outbound(
                        io.thermocline.wire.OpMsg.request(1, new BsonDocument("hello", new BsonInt32(1)).append("$db", new BsonString("admin"))), null)));
                assertThat(plain.closedByPeer()).isTrue();
            }
            try (MongoClient plainDriver = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=1500"))) {
                assertThatThrownBy(() -> plainDriver.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOf(MongoTimeoutException.class);
            }
        }
    }

    @Test
    void theSyncAndReactiveDriversLogInOverTlsWithBothMechanismsAndGet18And13() throws Exception {
        Path caFile = pem(installCertificateOfTestCa(), "ca.crt");
        try (SecuredProxy p = SecuredProxy.withTls(tls("required", dir.resolve("tls.crt"), dir.resolve("tls.key")))) {
            for (MongoCredential credential : List.of(
                    MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray()),
                    MongoCredential.createScramSha1Credential("sha1only", "admin", "old-pw".toCharArray()))) {
                MongoClientSettings settings = tlsSettings(p, caFile).credential(credential).build();
                try (MongoClient sync = MongoClients.create(settings);
                     com.mongodb.reactivestreams.client.MongoClient reactive = com.mongodb.reactivestreams.client.MongoClients.create(settings)) {
                    assertThat(sync.getDatabase("shop").getCollection("both").countDocuments()).isNotNegative();
                    Document status = Mono.from(reactive.getDatabase("admin").runCommand(new Document("connectionStatus", 1))).block();
                    assertThat(status.get("authInfo", Document.class).getList("authenticatedUsers", Document.class))
                            .containsExactly(new Document("user", credential.getUserName()).append("db", "admin"));
                }
            }
            MongoClientSettings wrong = tlsSettings(p, caFile)
                    .credential(MongoCredential.createScramSha256Credential("alice", "admin", "nope".toCharArray())).build();
            try (MongoClient sync = MongoClients.create(wrong);
                 com.mongodb.reactivestreams.client.MongoClient reactive = com.mongodb.reactivestreams.client.MongoClients.create(wrong)) {
                assertThatThrownBy(() -> sync.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOfSatisfying(MongoSecurityException.class, e -> assertThat(e.getCause())
                                .isInstanceOfSatisfying(MongoCommandException.class, c -> assertThat(c.getErrorCode()).isEqualTo(18)));
                assertThatThrownBy(() -> Mono.from(reactive.getDatabase("admin").runCommand(new Document("ping", 1))).block())
                        .isInstanceOf(MongoSecurityException.class);
            }
            MongoClientSettings reader = tlsSettings(p, caFile)
                    .credential(MongoCredential.createCredential("reporter", "admin", "reporter-pw".toCharArray())).build();
            try (MongoClient anonymous = MongoClients.create(tlsSettings(p, caFile).build());
                 com.mongodb.reactivestreams.client.MongoClient reactive = com.mongodb.reactivestreams.client.MongoClients.create(reader)) {
                assertThatThrownBy(() -> anonymous.getDatabase("shop").getCollection("orders").find().first())
                        .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(13));
                assertThatThrownBy(() -> Mono.from(reactive.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1))).block())
                        .isInstanceOfSatisfying(MongoException.class, e -> assertThat(e.getCode()).isEqualTo(13));
                assertThatThrownBy(() -> Mono.from(reactive.getDatabase("shop").getCollection("orders").aggregate(List.of(
                        new Document("$lookup", new Document("from", "customers").append("localField", "c").append("foreignField", "_id")
                                .append("as", "x"))))).block())
                        .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(13));
            }
        }
    }

    private static MongoClientSettings.Builder tlsSettings(SecuredProxy p, Path caFile) {
        return MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(p.uri("", "?tls=true&serverSelectionTimeoutMS=3000&retryWrites=false")))
                .applyToSslSettings(ssl -> ssl.enabled(true).context(PemTrust.sslContext(caFile)));
    }

    @Test
    void anUntrustedCertificateAndAWrongHostNameAreRefusedByTheClient() throws Exception {
        X509Bundle ca = ca("test-ca");
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        Path otherCa = pem(ca("someone-else"), "other-ca.crt");
        install(server(ca, "127.0.0.1", 1), cert, key);
        try (SecuredProxy p = SecuredProxy.withTls(tls("required", cert, key))) {
            assertThatThrownBy(() -> tlsSocket(p.proxy.port(), otherCa)).isInstanceOf(SSLHandshakeException.class);
            try (MongoClient c = client(p, otherCa, "alice:alice-pw")) {
                assertThatThrownBy(() -> c.getDatabase("admin").runCommand(new Document("ping", 1))).isInstanceOf(MongoTimeoutException.class);
            }
        }
        install(server(ca, "db.example.com", 2), cert, key);
        try (SecuredProxy p = SecuredProxy.withTls(tls("required", cert, key)); MongoClient c = client(p, pem(ca, "ca.crt"), "alice:alice-pw")) {
            // Trusted CA, but the certificate names another host: the driver checks host names.
            assertThatThrownBy(() -> c.getDatabase("admin").runCommand(new Document("ping", 1))).isInstanceOf(MongoTimeoutException.class);
        }
    }

    @Test
    void aRotatedCertificateIsServedToNewConnectionsWhileOpenOnesKeepWorking() throws Exception {
        X509Bundle oldCa = ca("old-ca");
        X509Bundle newCa = ca("new-ca");
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        install(server(oldCa, "127.0.0.1", 1), cert, key);
        Path oldTrust = pem(oldCa, "old-ca.crt");
        Path newTrust = pem(newCa, "new-ca.crt");
        try (SecuredProxy p = SecuredProxy.withTls(tls("required", cert, key));
             WireClient live = new WireClient(tlsSocket(p.proxy.port(), oldTrust));
             MongoClient pooled = client(p, oldTrust, "alice:alice-pw")) {
            BsonDocument ping = new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin"));
            assertThat(live.command(ping).body().getNumber("ok").intValue()).isEqualTo(1);
            pooled.getDatabase("shop").getCollection("rot").insertOne(new Document("before", true));

            install(server(newCa, "127.0.0.1", 2), cert, key);
            await().atMost(java.time.Duration.ofSeconds(10)).pollInterval(java.time.Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
                try (SSLSocket s = tlsSocket(p.proxy.port(), newTrust)) {
                    assertThat(((X509Certificate) s.getSession().getPeerCertificates()[0]).getSerialNumber()).isEqualTo(BigInteger.TWO);
                }
            });
            // The connection opened before the rotation was not dropped, and the driver's pooled one still works.
            assertThat(live.command(ping).body().getNumber("ok").intValue()).isEqualTo(1);
            pooled.getDatabase("shop").getCollection("rot").insertOne(new Document("after", true));
            assertThat(pooled.getDatabase("shop").getCollection("rot").countDocuments()).isEqualTo(2);
            try (MongoClient fresh = client(p, newTrust, "alice:alice-pw")) {
                assertThat(fresh.getDatabase("shop").getCollection("rot").countDocuments()).isEqualTo(2);
            }
        }
    }

    @Test
    void allowedModeTakesTlsAndPlainTextOnOnePort() throws Exception {
        X509Bundle ca = ca("test-ca");
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        install(server(ca, "127.0.0.1", 1), cert, key);
        try (SecuredProxy p = SecuredProxy.withTls(tls("allowTLS", cert, key))) {
            try (MongoClient overTls = client(p, pem(ca, "ca.crt"), "alice:alice-pw")) {
                assertThat(overTls.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok")).isEqualTo(1.0);
            }
            try (MongoClient plain = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(new ConnectionString(p.uri("", "?serverSelectionTimeoutMS=3000")))
                    .credential(MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray())).build())) {
                assertThat(plain.getDatabase("admin").runCommand(new Document("ping", 1)).get("ok")).isEqualTo(1.0);
            }
        }
        assertThat(List.of(ClientTls.disabled().mode())).containsExactly(ClientTls.Mode.DISABLED);
    }
}
