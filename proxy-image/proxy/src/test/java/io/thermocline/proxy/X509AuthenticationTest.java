package io.thermocline.proxy;

import static io.thermocline.proxy.TestCertificates.ca;
import static io.thermocline.proxy.TestCertificates.server;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoException;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.event.ServerDescriptionChangedEvent;
import com.mongodb.event.ServerListener;
import io.netty.pkitesting.CertificateBuilder;
import io.netty.pkitesting.X509Bundle;
import io.thermocline.config.TlsConfig;
import io.thermocline.proxy.auth.UsersFile;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.authentication.LoginThrottle;
import io.thermocline.security.tls.PemTrust;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509KeyManager;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** MONGODB-X509: a verified client certificate logs in as the $external user named by its subject DN. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class X509AuthenticationTest {
    private static final String SUBJECT = "CN=app,OU=shop,O=Thermocline";

    @TempDir
    Path dir;

    private static X509Bundle client(X509Bundle ca, String subject, long serial) throws Exception {
        return new CertificateBuilder()
                .subject(subject)
                .serial(BigInteger.valueOf(serial))
                .ecp256()
                .notBefore(Instant.now().minusSeconds(60))
                .notAfter(Instant.now().plusSeconds(3600))
                .addExtendedKeyUsageClientAuth()
                .buildIssuedBy(ca);
    }

    private static MongoClient connect(SecuredProxy p, Path caFile, X509Bundle clientCert) throws Exception {
        return connect(p, caFile, clientCert, false, MongoCredential.createMongoX509Credential());
    }

    /**
     * {@code always}: present the certificate even when the proxy's list of acceptable CAs does not name its
     * issuer (the JDK's own key manager then sends none; OpenSSL clients such as pymongo send it anyway).
     */
    private static MongoClient connect(
            SecuredProxy p, Path caFile, X509Bundle clientCert, boolean always, MongoCredential credential)
            throws Exception {
        return connect(p, caFile, clientCert, always, credential, "TLS");
    }

    /** {@code protocol}: "TLS" (1.3 and 1.2) or "TLSv1.2" (1.2 only). */
    private static MongoClient connect(
            SecuredProxy p,
            Path caFile,
            X509Bundle clientCert,
            boolean always,
            MongoCredential credential,
            String protocol)
            throws Exception {
        SSLContext context = sslContext(caFile, clientCert, always, protocol);
        MongoClientSettings.Builder b = MongoClientSettings.builder()
                .applyConnectionString(
                        new ConnectionString(p.uri("", "?tls=true&serverSelectionTimeoutMS=15000&retryWrites=false")))
                .applyToSslSettings(ssl -> ssl.enabled(true).context(context));
        return MongoClients.create(
                credential == null ? b.build() : b.credential(credential).build());
    }

    /**
     * What the driver's monitor got when it connected with this certificate, as soon as it got it: a refused
     * handshake shows here at once, where a command would wait for the whole server selection timeout to say the same.
     */
    private static Throwable handshakeFailure(
            SecuredProxy p, Path caFile, X509Bundle clientCert, boolean always, String protocol) throws Exception {
        CompletableFuture<Throwable> failed = new CompletableFuture<>();
        SSLContext context = sslContext(caFile, clientCert, always, protocol);
        MongoClientSettings settings = MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(p.uri("", "?tls=true&retryWrites=false")))
                .applyToSslSettings(ssl -> ssl.enabled(true).context(context))
                .applyToServerSettings(s -> s.addServerListener(new ServerListener() {
                    @Override
                    public void serverDescriptionChanged(ServerDescriptionChangedEvent event) {
                        if (event.getNewDescription().getException() != null) {
                            failed.complete(event.getNewDescription().getException());
                        } else if (event.getNewDescription().isOk()) {
                            failed.completeExceptionally(
                                    new AssertionError("the handshake succeeded: " + event.getNewDescription()));
                        }
                    }
                }))
                .build();
        try (MongoClient ignored = MongoClients.create(settings)) {
            return failed.get(30, TimeUnit.SECONDS);
        }
    }

    /** The TLS alert the proxy sent, in the monitor's exception's causes (not a timeout, nor a reset, nor another error). */
    private static void assertAlert(Throwable e, String alert) {
        assertThat(e).isInstanceOf(MongoSocketException.class);
        assertThat(e)
                .hasRootCauseInstanceOf(SSLHandshakeException.class)
                .rootCause()
                .hasMessage("Received fatal alert: " + alert);
    }

    private static SSLContext sslContext(Path caFile, X509Bundle clientCert, boolean always, String protocol)
            throws Exception {
        SSLContext context = SSLContext.getInstance(protocol);
        KeyManager[] keys = null;
        if (clientCert != null) {
            KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            factory.init(clientCert.toKeyStore("pw".toCharArray()), "pw".toCharArray());
            keys = always
                    ? new KeyManager[] {new AlwaysPresent((X509KeyManager) factory.getKeyManagers()[0])}
                    : factory.getKeyManagers();
        }
        context.init(keys, PemTrust.trustManagers(caFile).getTrustManagers(), null);
        return context;
    }

    /** A key manager that offers its certificate whatever CAs the server asks for. */
    private static final class AlwaysPresent extends X509ExtendedKeyManager {
        private final X509KeyManager keys;

        AlwaysPresent(X509KeyManager keys) {
            this.keys = keys;
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return keys.getClientAliases(keyType, null);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return keys.chooseClientAlias(keyType, null, socket);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, javax.net.ssl.SSLEngine engine) {
            return keys.chooseClientAlias(keyType, null, null);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return keys.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return keys.getPrivateKey(alias);
        }
    }

    /** How many {@code command}s the proxy answered with {@code outcome}, from its /metrics. */
    private static long commands(SecuredProxy p, String command, String outcome) throws Exception {
        return metric(p, "thermocline_proxy_commands_total{command=\"" + command + "\",outcome=\"" + outcome + "\"}");
    }

    /** The value of one series of the proxy's /metrics (0 when absent). */
    private static long metric(SecuredProxy p, String series) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.proxy.metrics().writeTo(out);
        Matcher m = Pattern.compile(Pattern.quote(series) + " ([0-9.]+)").matcher(out.toString(StandardCharsets.UTF_8));
        return m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
    }

    private Path pemBundle(X509Bundle cert, String name) throws Exception {
        return Files.writeString(dir.resolve(name), cert.getCertificatePathPEM() + cert.getPrivateKeyPEM());
    }

    /** The proxy with the CA's certificates and SUBJECT as an $external user, in {@code mode}, client certificates optional. */
    private SecuredProxy proxy(X509Bundle ca, String mode) throws Exception {
        return proxy(ca, mode, null);
    }

    /** {@code allowWithout}: {@code tls.allowConnectionsWithoutCertificates} (null: unset). */
    private SecuredProxy proxy(X509Bundle ca, String mode, Boolean allowWithout) throws Exception {
        return proxy(
                ca,
                mode,
                allowWithout,
                "  - {user: \"" + SUBJECT + "\", db: $external, roles: [{role: read, db: shop}]}\n");
    }

    /** {@code externalUsers}: the users file's lines for the $external users. */
    private SecuredProxy proxy(X509Bundle ca, String mode, Boolean allowWithout, String externalUsers)
            throws Exception {
        X509Bundle serverCert = server(ca, "127.0.0.1", 1);
        Path cert = Files.writeString(dir.resolve("tls.crt"), serverCert.getCertificatePathPEM());
        Path key = Files.writeString(dir.resolve("tls.key"), serverCert.getPrivateKeyPEM());
        Path caFile = Files.writeString(dir.resolve("ca.crt"), ca.getRootCertificatePEM());
        Path users = Files.writeString(
                dir.resolve("users.yaml"), SecuredProxy.USERS.replace("users:\n", "users:\n" + externalUsers));
        ClientTls tls = ClientTls.from(
                new TlsConfig(mode, cert.toString(), key.toString(), caFile.toString(), null, allowWithout));
        return SecuredProxy.start(new UsersFile(users), LoginThrottle.off(), null, null, tls);
    }

    @Test
    void aClientCertificateLogsInAsItsSubjectWithThatUsersRolesOnly() throws Exception {
        X509Bundle ca = ca("x509-ca");
        try (SecuredProxy p = proxy(ca, "required")) {
            Path caFile = dir.resolve("ca.crt");
            try (MongoClient app = connect(p, caFile, client(ca, SUBJECT, 2))) {
                Document status = app.getDatabase("admin").runCommand(new Document("connectionStatus", 1));
                assertThat(status.get("authInfo", Document.class).getList("authenticatedUsers", Document.class))
                        .containsExactly(new Document("user", SUBJECT).append("db", "$external"));
                assertThat(app.getDatabase("shop").getCollection("orders").countDocuments())
                        .isNotNegative();
                assertThatThrownBy(() ->
                                app.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1)))
                        .isInstanceOfSatisfying(
                                MongoException.class,
                                e -> assertThat(e.getCode()).isEqualTo(13));
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
                assertThatThrownBy(() -> forged.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOf(MongoSecurityException.class);
            }
        }
    }

    @Test
    void speculativeX509InHelloLogsInWithoutAnAuthenticateCommand() throws Exception {
        X509Bundle ca = ca("x509-ca");
        try (SecuredProxy p = proxy(ca, "required")) {
            Path caFile = dir.resolve("ca.crt");
            try (MongoClient app = connect(p, caFile, client(ca, SUBJECT, 2))) {
                assertThat(app.getDatabase("shop").getCollection("orders").countDocuments())
                        .as("logged in: read allowed")
                        .isNotNegative();
            }
            assertThat(commands(p, "authenticate", "ok") + commands(p, "authenticate", "error"))
                    .as("the hello reply's speculativeAuthenticate logged the driver in")
                    .isZero();

            // speculative SCRAM still saves saslStart: the driver sends only saslContinue
            try (MongoClient alice = connect(
                    p,
                    caFile,
                    null,
                    false,
                    MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray()))) {
                alice.getDatabase("shop").getCollection("orders").countDocuments();
            }
            assertThat(commands(p, "saslStart", "ok") + commands(p, "saslStart", "error"))
                    .isZero();
            assertThat(commands(p, "saslContinue", "ok")).isPositive();

            // a certificate of no user: the speculative attempt is not answered, and the driver's own authenticate gets
            // 18
            X509Bundle stranger = client(ca, "CN=stranger,O=Thermocline", 3);
            try (MongoClient c = connect(p, caFile, stranger)) {
                assertThatThrownBy(() -> c.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOfSatisfying(MongoSecurityException.class, e -> {
                            assertThat(e.getCause()).isInstanceOfSatisfying(MongoCommandException.class, cause -> {
                                assertThat(cause.getErrorCode()).isEqualTo(18);
                                assertThat(cause.getErrorMessage()).isEqualTo("Authentication failed.");
                            });
                        });
            }
            assertThat(commands(p, "authenticate", "error"))
                    .as("the driver fell back to authenticate")
                    .isEqualTo(1);
            assertThat(metric(p, "thermocline_proxy_logins_total{mechanism=\"MONGODB-X509\",outcome=\"failure\"}"))
                    .as("one failed login, counted once")
                    .isEqualTo(1);
            try (MongoClient c = connect(p, caFile, stranger, false, null)) {
                assertThatThrownBy(() -> c.getDatabase("$external")
                                .runCommand(new Document("authenticate", 1).append("mechanism", "MONGODB-X509")))
                        .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(18);
                            assertThat(e.getErrorMessage()).isEqualTo("Authentication failed.");
                        });
            }
        }
    }

    @Test
    void withOptionalClientCertificatesAnUntrustedCertificateFailsTheHandshakeAndNoCertificateStillConnects()
            throws Exception {
        X509Bundle ca = ca("x509-ca");
        X509Bundle forged = client(ca("someone-else"), SUBJECT, 4);
        try (SecuredProxy p = proxy(ca, "preferred")) {
            Path caFile = dir.resolve("ca.crt");
            // the Java driver, made to present the certificate: the TLS handshake fails, before any command
            for (String protocol : List.of("TLSv1.2", "TLS")) {
                assertAlert(handshakeFailure(p, caFile, forged, true, protocol), "unknown_ca");
            }
            assertThat(commands(p, "hello", "ok") + commands(p, "isMaster", "ok"))
                    .as("no command got through")
                    .isZero();
            // no certificate at all: TLS works, and so does SCRAM
            try (MongoClient alice = connect(
                    p,
                    caFile,
                    null,
                    false,
                    MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray()))) {
                assertThat(alice.getDatabase("shop").getCollection("orders").countDocuments())
                        .isNotNegative();
            }
            // and the trusted certificate logs in
            try (MongoClient app =
                    connect(p, caFile, client(ca, SUBJECT, 5), true, MongoCredential.createMongoX509Credential())) {
                assertThat(app.getDatabase("shop").getCollection("orders").countDocuments())
                        .isNotNegative();
            }
        }
    }

    @Test
    void withRequiredClientCertificatesAClientWithoutOneFailsTheHandshakeAndAVerifiedOneConnects() throws Exception {
        X509Bundle ca = ca("x509-ca");
        try (SecuredProxy p = proxy(ca, "preferred", false)) {
            Path caFile = dir.resolve("ca.crt");
            MongoCredential alice =
                    MongoCredential.createScramSha256Credential("alice", "admin", "alice-pw".toCharArray());
            // the Java driver without a certificate, in TLS 1.2 and 1.3: refused in the handshake, with or without a
            // login
            for (String protocol : List.of("TLSv1.2", "TLS")) {
                // the alerts OpenSSL sends for a missing certificate: TLS 1.3 has its own
                assertAlert(
                        handshakeFailure(p, caFile, null, false, protocol),
                        protocol.equals("TLSv1.2") ? "handshake_failure" : "certificate_required");
            }
            assertThat(commands(p, "hello", "ok") + commands(p, "isMaster", "ok"))
                    .as("no command got through")
                    .isZero();
            // a verified certificate connects: it logs in with x.509, or carries a SCRAM login
            try (MongoClient app = connect(p, caFile, client(ca, SUBJECT, 8))) {
                assertThat(app.getDatabase("shop").getCollection("orders").countDocuments())
                        .isNotNegative();
            }
            try (MongoClient withCert =
                    connect(p, caFile, client(ca, "CN=alice-laptop,O=Thermocline", 9), false, alice)) {
                assertThat(withCert.getDatabase("shop").getCollection("orders").countDocuments())
                        .isNotNegative();
            }
            // an untrusted certificate is refused as before
            assertAlert(
                    handshakeFailure(p, caFile, client(ca("someone-else"), SUBJECT, 10), true, "TLS"), "unknown_ca");
            // plain text on the preferred port: the setting is about TLS connections, as mongod's is
            try (MongoClient plain = MongoClients.create(MongoClientSettings.builder()
                    .applyConnectionString(
                            new ConnectionString(p.uri("", "?serverSelectionTimeoutMS=15000&retryWrites=false")))
                    .credential(alice)
                    .build())) {
                assertThat(plain.getDatabase("shop").getCollection("orders").countDocuments())
                        .isNotNegative();
            }
        }
    }

    @Test
    void theSubjectIsNamedAsMongodNamesItAndOnlyThatExactNameLogsIn() throws Exception {
        // the JDK's string form, and mongod's name for the same subject: short names, UTF-8 bytes escaped, RFC 2253
        // order
        String certificate = "CN=Ana M\u00fcller,OU=R&D\\, Berlin,O=Thermocline,1.2.840.113549.1.9.1=ana@example.com";
        String mongod = "CN=Ana M\\C3\\BCller,OU=R&D\\, Berlin,O=Thermocline,emailAddress=ana@example.com";
        X509Bundle ca = ca("x509-ca");
        String users = "  - {user: '" + mongod + "', db: $external, roles: [{role: read, db: shop}]}\n"
                // the certificate SUBJECT's DN, spelled with spaces and lower-case types: equal DNs, other names
                + "  - {user: 'CN=app, OU=shop, O=Thermocline', db: $external, roles: [{role: read, db: shop}]}\n"
                + "  - {user: 'cn=app,ou=shop,o=Thermocline', db: $external, roles: [{role: read, db: shop}]}\n";
        try (SecuredProxy p = proxy(ca, "required", null, users)) {
            Path caFile = dir.resolve("ca.crt");
            X509Bundle ana = client(ca, certificate, 11);
            try (MongoClient c = connect(p, caFile, ana)) {
                Document status = c.getDatabase("admin").runCommand(new Document("connectionStatus", 1));
                assertThat(status.get("authInfo", Document.class).getList("authenticatedUsers", Document.class))
                        .containsExactly(new Document("user", mongod).append("db", "$external"));
            }
            // the driver naming the user: mongod's name logs in, the JDK's form of the same subject does not
            try (MongoClient c = connect(p, caFile, ana, false, MongoCredential.createMongoX509Credential(mongod))) {
                assertThat(c.getDatabase("shop").getCollection("orders").countDocuments())
                        .isNotNegative();
            }
            String jdkForm = ana.getCertificate()
                    .getSubjectX500Principal()
                    .getName(javax.security.auth.x500.X500Principal.RFC2253);
            assertThat(jdkForm).isNotEqualTo(mongod);
            try (MongoClient c = connect(p, caFile, ana, false, MongoCredential.createMongoX509Credential(jdkForm))) {
                assertThatThrownBy(() -> c.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOfSatisfying(
                                MongoSecurityException.class,
                                e -> assertThat(e.getCause())
                                        .isInstanceOfSatisfying(
                                                MongoCommandException.class,
                                                cause -> assertThat(cause.getErrorCode())
                                                        .isEqualTo(18)));
            }
            // mongod matches names exactly: users created with another spelling of CN=app,OU=shop,O=Thermocline are not
            // it
            try (MongoClient c = connect(p, caFile, client(ca, SUBJECT, 12))) {
                assertThatThrownBy(() -> c.getDatabase("admin").runCommand(new Document("ping", 1)))
                        .isInstanceOfSatisfying(
                                MongoSecurityException.class,
                                e -> assertThat(e.getCause())
                                        .isInstanceOfSatisfying(
                                                MongoCommandException.class,
                                                cause -> assertThat(cause.getErrorCode())
                                                        .isEqualTo(18)));
            }
        }
    }

    @Test
    void pymongoWithOptionalClientCertificates() throws Exception {
        String python = ExternalClient.pymongoPython();
        assumeTrue(
                python != null,
                "pymongo not found: apt-get install -y python3-pymongo (.ci/run does), or set THERMOCLINE_PYTHON");
        X509Bundle ca = ca("x509-ca");
        try (SecuredProxy p = proxy(ca, "preferred")) {
            Path caFile = dir.resolve("ca.crt");
            Path good = pemBundle(client(ca, SUBJECT, 6), "good.pem");
            Path forged = pemBundle(client(ca("someone-else"), SUBJECT, 7), "forged.pem");
            Path script = Files.writeString(dir.resolve("x509.py"), """
                    import sys, pymongo
                    from pymongo.errors import ServerSelectionTimeoutError, AutoReconnect
                    port, ca, good, forged = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
                    def client(selection=15000, **kw):
                        return pymongo.MongoClient('127.0.0.1', port, tls=True, tlsCAFile=ca, serverSelectionTimeoutMS=selection, **kw)
                    c = client(tlsCertificateKeyFile=good, authMechanism='MONGODB-X509')
                    print('x509 user', c.admin.command('connectionStatus')['authInfo']['authenticatedUsers'][0]['user'])
                    c.close()
                    c = client(username='alice', password='alice-pw', authSource='admin')
                    print('scram without certificate', c.shop.command('ping')['ok'])
                    c.close()
                    try:
                        client(3000, tlsCertificateKeyFile=forged, authMechanism='MONGODB-X509').admin.command('ping')
                        print('forged certificate: logged in')
                    except (ServerSelectionTimeoutError, AutoReconnect) as e:
                        print('forged certificate refused:', e)
                    """);
            ExternalClient.Result r = ExternalClient.run(List.of(
                    python,
                    script.toString(),
                    String.valueOf(p.proxy.port()),
                    caFile.toString(),
                    good.toString(),
                    forged.toString()));
            assertThat(r.output())
                    .as(r.output())
                    .contains("x509 user " + SUBJECT)
                    .contains("scram without certificate 1.0")
                    .containsPattern("forged certificate refused:.*(SSL|alert|certificate)");
            assertThat(r.exit()).as(r.output()).isZero();
            assertThat(commands(p, "authenticate", "ok") + commands(p, "authenticate", "error"))
                    .as("pymongo logged in with speculative x.509 too")
                    .isZero();
        }
    }
}
