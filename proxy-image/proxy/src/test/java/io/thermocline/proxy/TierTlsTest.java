package io.thermocline.proxy;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.netty.pkitesting.X509Bundle;
import io.thermocline.embedded.EmbeddedReplicaSet;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.thermocline.proxy.TestCertificates.ca;
import static io.thermocline.proxy.TestCertificates.server;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The proxy reaches a tier that requires TLS and authentication, trusting only tls.tierCaFile and checking host names. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TierTlsTest {
    @TempDir
    Path dir;

    private EmbeddedReplicaSet tlsArchive(X509Bundle cert) throws Exception {
        Path certFile = Files.writeString(dir.resolve("archive.crt"), cert.getCertificatePathPEM());
        Path keyFile = Files.writeString(dir.resolve("archive.key"), cert.getPrivateKeyPEM());
        return EmbeddedReplicaSet.builder().tls(certFile, keyFile).requireAuthentication(true)
                .user("thermocline-proxy", "proxy-pw", "root").build().start();
    }

    private SecuredProxy proxy(EmbeddedReplicaSet archive, Path caFile) {
        return SecuredProxy.fromConfig(archive, archive.connectionString().replace("mongodb://", "mongodb://thermocline-proxy:proxy-pw@"),
                "auth:\n  mode: disabled\n  users: []\ntls:\n  tierCaFile: '" + caFile + "'\n");
    }

    @Test
    void trafficGoesOverTlsToATierSignedByTheConfiguredCa() throws Exception {
        X509Bundle ca = ca("tier-ca");
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        try (SecuredProxy p = proxy(tlsArchive(server(ca, "127.0.0.1", 1)), caFile);
             MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=5000"))) {
            c.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1));
            assertThat(c.getDatabase("shop").getCollection("orders").countDocuments()).isEqualTo(1);
        }
    }

    @Test
    void aTierWithAnUntrustedCertificateOrAnotherHostNameIsNotUsed() throws Exception {
        Path otherCa = Files.writeString(dir.resolve("other.crt"), ca("someone-else").getRootCertificatePEM());
        try (SecuredProxy p = proxy(tlsArchive(server(ca("tier-ca"), "127.0.0.1", 1)), otherCa);
             MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=2000&retryReads=false"))) {
            assertThatThrownBy(() -> c.getDatabase("shop").getCollection("orders").countDocuments()).isInstanceOf(MongoException.class);
        }
        X509Bundle ca = ca("tier-ca");
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        try (SecuredProxy p = proxy(tlsArchive(server(ca, "db.example.com", 2)), caFile);
             MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=2000&retryReads=false"))) {
            assertThatThrownBy(() -> c.getDatabase("shop").getCollection("orders").countDocuments()).isInstanceOf(MongoException.class);
        }
    }

    /** Issue 25 item 8: tls=true in a tier URI without tls.tierCaFile is TLS (system trust store) or no connection, never plain text. */
    @Test
    void aTierUriAskingForTlsIsNeverReachedInPlainText() throws Exception {
        try (EmbeddedReplicaSet plainOnly = EmbeddedReplicaSet.startSingle();
             SecuredProxy p = SecuredProxy.fromConfig(plainOnly, withTls(plainOnly.connectionString()), "auth:\n  mode: disabled\n  users: []\n");
             MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=2000&retryReads=false&retryWrites=false"))) {
            assertThatThrownBy(() -> c.getDatabase("shop").getCollection("cards").insertOne(new Document("_id", "4111111111111111")))
                    .isInstanceOf(MongoException.class);
            try (MongoClient direct = MongoClients.create(plainOnly.connectionString())) {
                assertThat(direct.getDatabase("shop").getCollection("cards").countDocuments()).as("nothing reached the tier in plain text").isZero();
            }
        }
        // a TLS tier whose CA the system trust store does not hold is refused too
        try (EmbeddedReplicaSet archive = tlsArchive(server(ca("private-ca"), "127.0.0.1", 3));
             SecuredProxy p = SecuredProxy.fromConfig(archive, withTls(archive.connectionString().replace("mongodb://", "mongodb://thermocline-proxy:proxy-pw@")),
                     "auth:\n  mode: disabled\n  users: []\n");
             MongoClient c = MongoClients.create(p.uri("", "?serverSelectionTimeoutMS=2000&retryReads=false"))) {
            assertThatThrownBy(() -> c.getDatabase("shop").getCollection("orders").countDocuments()).isInstanceOf(MongoException.class);
        }
    }

    private static String withTls(String uri) {
        return uri + (uri.contains("?") ? "&" : uri.endsWith("/") ? "?" : "/?") + "tls=true";
    }
}
