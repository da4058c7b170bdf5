package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.MongoException;
import com.mongodb.MongoSecurityException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.thermocline.config.TlsConfig;
import io.thermocline.proxy.auth.UsersFile;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.authentication.LoginThrottle;
import io.thermocline.security.tls.PemTrust;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static io.thermocline.proxy.TestCertificates.ca;
import static io.thermocline.proxy.TestCertificates.server;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** MONGODB-X509: a verified client certificate logs in as the $external user named by its subject DN. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class X509AuthenticationTest {
    private static final String SUBJECT = "CN=app,OU=shop,O=Thermocline";

    @TempDir
    Path dir;

    private static X509Bundle client(X509Bundle ca, String subject, long serial) throws Exception {
        return new CertificateBuilder().subject(subject).serial(BigInteger.valueOf(serial)).ecp256()
                .notBefore(Instant.now().minusSeconds(60)).notAfter(Instant.now().plusSeconds(3600))
                .addExtendedKeyUsageClientAuth().buildIssuedBy(ca);
    }

    private static MongoClient connect(SecuredProxy p, Path caFile, X509Bundle clientCert) throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        KeyManagerFactory keys = null;
        if (clientCert != null) {
            keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keys.init(clientCert.toKeyStore("pw".toCharArray()), "pw".toCharArray());
        }
        context.init(keys == null ? null : keys.getKeyManagers(), PemTrust.trustManagers(caFile).getTrustManagers(), null);
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(p.uri("", "?tls=true&serverSelectionTimeoutMS=3000&retryWrites=false")))
                .applyToSslSettings(ssl -> ssl.enabled(true).context(context))
                .credential(MongoCredential.createMongoX509Credential()).build());
    }

    @Test
    void aClientCertificateLogsInAsItsSubjectWithThatUsersRolesOnly() throws Exception {
        X509Bundle ca = ca("x509-ca");
        X509Bundle serverCert = server(ca, "127.0.0.1", 1);
        Path cert = Files.writeString(dir.resolve("tls.crt"), serverCert.getCertificatePathPEM());
        Path key = Files.writeString(dir.resolve("tls.key"), serverCert.getPrivateKeyPEM());
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        Path users = Files.writeString(dir.resolve("users.yaml"), SecuredProxy.USERS.replace("users:\n",
                "users:\n  - {user: \"" + SUBJECT + "\", db: $external, roles: [{role: read, db: shop}]}\n"));
        ClientTls tls = ClientTls.from(new TlsConfig("required", cert.toString(), key.toString(), caFile.toString(), null));
        try (SecuredProxy p = SecuredProxy.start(new UsersFile(users), LoginThrottle.off(), null, null, tls)) {
            try (MongoClient app = connect(p, caFile, client(ca, SUBJECT, 2))) {
                Document status = app.getDatabase("admin").runCommand(new Document("connectionStatus", 1));
                assertThat(status.get("authInfo", Document.class).getList("authenticatedUsers", Document.class))
                        .containsExactly(new Document("user", SUBJECT).append("db", "$external"));
                assertThat(app.getDatabase("shop").getCollection("orders").countDocuments()).isNotNegative();
                assertThatThrownBy(() -> app.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1)))
                        .isInstanceOfSatisfying(MongoException.class, e -> assertThat(e.getCode()).isEqualTo(13));
            }
            // a certificate of the right CA whose subject is no user, and no certificate at all: 18
            try (MongoClient stranger = connect(p, caFile, client(ca, "CN=stranger,O=Thermocline", 3))) {
                assertThatThrownBy(() -> stranger.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOf(MongoSecurityException.class);
            }
            try (MongoClient noCert = connect(p, caFile, null)) {
                assertThatThrownBy(() -> noCert.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOf(MongoSecurityException.class);
            }
            // the right subject, signed by a CA the proxy does not trust: never a login
            try (MongoClient forged = connect(p, caFile, client(ca("someone-else"), SUBJECT, 4))) {
                assertThatThrownBy(() -> forged.getDatabase("admin").runCommand(new Document("ping", 1))).isInstanceOf(MongoException.class);
            }
        }
    }
}
