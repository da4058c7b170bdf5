package io.thermocline.tiering.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.security.tls.PemTrust;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.warmer.Warmer;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The feeder, evictor and warmer reach two tiers that require TLS and SCRAM: each logs in as its
 * own user (the connection string's), trusts only {@code tls.tierCaFile} and checks host names.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class WorkersOverTlsTest {
    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        Collections.reverse(open);
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    private <T extends AutoCloseable> T opened(T c) {
        open.add(c);
        return c;
    }

    private static X509Bundle ca(String name) throws Exception {
        return new CertificateBuilder()
                .subject("CN=" + name)
                .setIsCertificateAuthority(true)
                .ecp256()
                .notBefore(Instant.now().minusSeconds(60))
                .notAfter(Instant.now().plusSeconds(3600))
                .buildSelfSigned();
    }

    private static X509Bundle server(X509Bundle ca, String dnsName, boolean loopbackIp, long serial) throws Exception {
        CertificateBuilder b = new CertificateBuilder()
                .subject("CN=" + dnsName)
                .serial(BigInteger.valueOf(serial))
                .ecp256()
                .notBefore(Instant.now().minusSeconds(60))
                .notAfter(Instant.now().plusSeconds(3600))
                .addExtendedKeyUsageServerAuth()
                .addSanDnsName(dnsName);
        if (loopbackIp) {
            b.addSanIpAddress("127.0.0.1");
        }
        return b.buildIssuedBy(ca);
    }

    /** A replica set serving TLS only with {@code cert}, requiring SCRAM, with one user per worker. */
    private EmbeddedReplicaSet tier(String name, X509Bundle cert) throws Exception {
        Path certFile = Files.writeString(dir.resolve(name + ".crt"), cert.getCertificatePathPEM());
        Path keyFile = Files.writeString(dir.resolve(name + ".key"), cert.getPrivateKeyPEM());
        return opened(EmbeddedReplicaSet.builder()
                .name(name)
                .tls(certFile, keyFile)
                .requireAuthentication(true)
                .user("admin", "admin-pw", "root")
                .user("feeder", "feeder-pw", "root")
                .user("evictor", "evictor-pw", "root")
                .user("warmer", "warmer-pw", "root")
                .build()
                .start());
    }

    /** How long a client that must connect may take: TLS handshakes and SCRAM take seconds on a loaded machine. */
    private static final int CONNECTS_MS = 60_000;
    /** How long a client that must be refused tries before it fails. */
    private static final int REFUSED_MS = 3_000;

    private static String as(EmbeddedReplicaSet tier, String user, String password) {
        return as(tier, user, password, CONNECTS_MS);
    }

    private static String as(EmbeddedReplicaSet tier, String user, String password, int selectionMs) {
        return tier.connectionString().replace("mongodb://", "mongodb://" + user + ":" + password + "@")
                + "&serverSelectionTimeoutMS=" + selectionMs;
    }

    private ThermoclineConfig config(EmbeddedReplicaSet fast, EmbeddedReplicaSet archive, String user, Path caFile) {
        return config(fast, archive, user, caFile, CONNECTS_MS);
    }

    private ThermoclineConfig config(
            EmbeddedReplicaSet fast, EmbeddedReplicaSet archive, String user, Path caFile, int selectionMs) {
        return ConfigLoader.parse(
                "tiers:\n"
                        + "  archive: {uri: '" + as(archive, user, user + "-pw", selectionMs) + "'}\n"
                        + "  fast: {uri: '" + as(fast, user, user + "-pw", selectionMs) + "'}\n"
                        + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n"
                        + "tls: {tierCaFile: '" + caFile + "'}\n",
                Map.of());
    }

    private MongoCollection<Document> orders(EmbeddedReplicaSet tier, Path caFile) {
        MongoClient c = opened(MongoClients.create(com.mongodb.MongoClientSettings.builder()
                .applyConnectionString(new com.mongodb.ConnectionString(as(tier, "admin", "admin-pw")))
                .applyToSslSettings(ssl -> ssl.context(PemTrust.sslContext(caFile)))
                .build()));
        return c.getDatabase("shop").getCollection("orders");
    }

    @Test
    void feederWarmerAndEvictorWorkOverTlsAsTheirOwnUsers() throws Exception {
        X509Bundle ca = ca("tier-ca");
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        EmbeddedReplicaSet fast = tier("fast", server(ca, "fast.tier", true, 1));
        EmbeddedReplicaSet archive = tier("archive", server(ca, "archive.tier", true, 2));
        MongoCollection<Document> fastOrders = orders(fast, caFile);
        MongoCollection<Document> archiveOrders = orders(archive, caFile);
        Instant now = Instant.now();
        archiveOrders.insertOne(new Document("_id", "recent-in-archive").append("createdAt", Date.from(now)));

        Feeder feeder = opened(Feeder.start(
                config(fast, archive, "feeder", caFile),
                Feeder.Options.defaults().withRegistry(new PrometheusRegistry())));
        assertThat(feeder.awaitStreaming(Duration.ofSeconds(60))).isTrue();
        fastOrders.insertOne(new Document("_id", "new").append("createdAt", Date.from(now)));
        fastOrders.insertOne(new Document("_id", "old").append("createdAt", Date.from(now.minusSeconds(7200))));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> archiveOrders.countDocuments(new Document("_id", "old")) == 1
                        && archiveOrders.countDocuments(new Document("_id", "new")) == 1);

        opened(Warmer.start(
                config(fast, archive, "warmer", caFile),
                Warmer.Options.defaults().withRegistry(new PrometheusRegistry())));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> fastOrders.countDocuments(new Document("_id", "recent-in-archive")) == 1);

        opened(Evictor.start(
                config(fast, archive, "evictor", caFile),
                Evictor.Options.defaults().withRegistry(new PrometheusRegistry())));
        await().atMost(Duration.ofSeconds(60)).until(() -> fastOrders.countDocuments(new Document("_id", "old")) == 0);
        assertThat(fastOrders.countDocuments(new Document("_id", "new"))).isEqualTo(1);
        assertThat(archiveOrders.countDocuments(new Document("_id", "old"))).isEqualTo(1);
    }

    @Test
    void workersRefuseAnUntrustedCaAnotherHostNameAndAWrongPassword() throws Exception {
        X509Bundle ca = ca("tier-ca");
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        Path otherCa =
                Files.writeString(dir.resolve("other.crt"), ca("someone-else").getRootCertificatePEM());
        EmbeddedReplicaSet trusted = tier("trusted", server(ca, "trusted.tier", true, 3));
        // signed by the right CA, but for another host: 127.0.0.1 is not in its names
        EmbeddedReplicaSet elsewhere = tier("elsewhere", server(ca, "db.example.com", false, 4));

        assertThat(ping(config(trusted, trusted, "feeder", caFile))).isEqualTo(1.0);
        assertThatThrownBy(() -> ping(config(trusted, trusted, "feeder", otherCa, REFUSED_MS)))
                .isInstanceOf(MongoException.class);
        assertThatThrownBy(() -> ping(config(elsewhere, elsewhere, "feeder", caFile, REFUSED_MS)))
                .isInstanceOf(MongoException.class);
        ThermoclineConfig wrongPassword = ConfigLoader.parse(
                "tiers:\n"
                        + "  archive: {uri: '" + as(trusted, "feeder", "nope", REFUSED_MS) + "'}\n"
                        + "  fast: {uri: '" + as(trusted, "feeder", "nope", REFUSED_MS) + "'}\n"
                        + "collections:\n  - {database: shop, collection: orders, ageField: createdAt, hotWindow: 1h}\n"
                        + "tls: {tierCaFile: '" + caFile + "'}\n",
                Map.of());
        assertThatThrownBy(() -> ping(wrongPassword)).isInstanceOf(MongoException.class);
    }

    private static double ping(ThermoclineConfig config) {
        try (TierClients clients = TierClients.open(config, "tls-test")) {
            Document reply = Blocking.single(clients.fast().getDatabase("admin").runCommand(new Document("ping", 1)))
                    .orElseThrow();
            return reply.get("ok", Number.class).doubleValue();
        }
    }
}
