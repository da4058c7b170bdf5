package io.thermocline.proxy;

import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.auth.UsersFile;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.authentication.LoginThrottle;
import io.thermocline.security.authentication.UserDirectory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A proxy that requires authentication, in front of a one-member embedded replica set, with
 * the users of {@link #USERS} (a users file) unless a test gives its own directory.
 */
final class SecuredProxy implements AutoCloseable {
    static final String USERS = """
            users:
              - {user: alice, db: admin, password: "alice-pw", roles: [{role: readWrite, db: shop}]}
              - {user: sha1only, db: admin, password: "old-pw", mechanisms: [SCRAM-SHA-1], roles: [{role: readWrite, db: shop}]}
              - {user: reader, db: shop, password: "reader-pw", roles: [read]}
              - {user: "I\u00ADX", db: admin, password: "\u2168", roles: [{role: read, db: shop}]}
              - {user: root, db: admin, password: "root-pw", roles: [{role: root, db: admin}]}
              - {user: reporter, db: admin, password: "reporter-pw", roles: [{role: ordersOnly, db: admin}]}
            roles:
              - {role: ordersReader, db: admin, privileges: [{resource: {db: shop, collection: orders}, actions: [find]}]}
              - {role: ordersOnly, db: admin, roles: [{role: ordersReader, db: admin}],
                 privileges: [{resource: {db: shop, collection: reports}, actions: [insert, find]}]}
            """;

    final EmbeddedReplicaSet archive;
    final ProxyServer proxy;
    final Path usersFile;

    private SecuredProxy(EmbeddedReplicaSet archive, ProxyServer proxy, Path usersFile) {
        this.archive = archive;
        this.proxy = proxy;
        this.usersFile = usersFile;
    }

    static SecuredProxy start() throws IOException {
        return start(LoginThrottle.off());
    }

    static SecuredProxy start(LoginThrottle throttle) throws IOException {
        Path file = Files.createTempFile("thermocline-users", ".yaml");
        Files.writeString(file, USERS);
        return start(new UsersFile(file), throttle, file, null);
    }

    static SecuredProxy start(UserDirectory users, LoginThrottle throttle, Path file, EmbeddedReplicaSet archive) {
        return start(users, throttle, file, archive, ClientTls.disabled());
    }

    /** With TLS for clients as {@code tls} says, and the users of {@link #USERS}. */
    static SecuredProxy withTls(ClientTls tls) throws IOException {
        Path file = Files.createTempFile("thermocline-users", ".yaml");
        Files.writeString(file, USERS);
        return start(new UsersFile(file), LoginThrottle.off(), file, null, tls);
    }

    static SecuredProxy start(
            UserDirectory users, LoginThrottle throttle, Path file, EmbeddedReplicaSet archive, ClientTls tls) {
        return start(users, throttle, file, archive, tls, "");
    }

    /**
     * With the users of {@link #USERS}, {@code proxyYaml} under {@code proxy:} (indented two spaces) and what {@code tune}
     * changes of the settings that are not in the schema.
     */
    static SecuredProxy withProxyConfig(String proxyYaml, UnaryOperator<ProxySettings> tune) throws IOException {
        Path file = Files.createTempFile("thermocline-users", ".yaml");
        Files.writeString(file, USERS);
        return start(new UsersFile(file), LoginThrottle.off(), file, null, ClientTls.disabled(), proxyYaml, tune);
    }

    private static SecuredProxy start(
            UserDirectory users,
            LoginThrottle throttle,
            Path file,
            EmbeddedReplicaSet archive,
            ClientTls tls,
            String proxyYaml) {
        return start(users, throttle, file, archive, tls, proxyYaml, UnaryOperator.identity());
    }

    private static SecuredProxy start(
            UserDirectory users,
            LoginThrottle throttle,
            Path file,
            EmbeddedReplicaSet archive,
            ClientTls tls,
            String proxyYaml,
            UnaryOperator<ProxySettings> tune) {
        EmbeddedReplicaSet rs = archive != null ? archive : EmbeddedReplicaSet.startSingle();
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n" + proxyYaml
                + "tiers:\n  archive:\n    uri: '" + rs.connectionString() + "'\n    connectionBudget: 4\n"
                + "fleet:\n  instanceId: secured-proxy-0\n";
        ProxySettings settings = tune.apply(ProxySettings.from(ConfigLoader.parse(yaml, Map.of()))
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200)));
        try {
            ProxyServer proxy = new ProxyServer(
                            settings, null, new ProxySecurity(ProxySecurity.Mode.REQUIRED, users, throttle, tls))
                    .start();
            return new SecuredProxy(rs, proxy, file);
        } catch (Exception e) {
            if (archive == null) {
                rs.close();
            }
            throw new IllegalStateException("proxy did not start", e);
        }
    }

    /** A proxy whose security comes from {@code auth:} YAML, as a deployed proxy's does; {@code archiveUri} may carry credentials. */
    static SecuredProxy fromConfig(EmbeddedReplicaSet archive, String archiveUri, String authYaml) {
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                + "tiers:\n  archive:\n    uri: '" + archiveUri + "'\n    connectionBudget: 4\n"
                + "fleet:\n  instanceId: secured-proxy-1\n" + authYaml;
        ThermoclineConfig config = ConfigLoader.parse(yaml, Map.of());
        ProxySettings settings = ProxySettings.from(config)
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200));
        try {
            return new SecuredProxy(archive, new ProxyServer(settings, null, ProxySecurity.from(config)).start(), null);
        } catch (Exception e) {
            throw new IllegalStateException("proxy did not start", e);
        }
    }

    /** A Java driver client logged in as {@code user} of {@code admin}. */
    com.mongodb.client.MongoClient client(String user, String password) {
        return com.mongodb.client.MongoClients.create(com.mongodb.MongoClientSettings.builder()
                .applyConnectionString(
                        new com.mongodb.ConnectionString(uri("", "?serverSelectionTimeoutMS=5000&retryWrites=false")))
                .credential(com.mongodb.MongoCredential.createCredential(user, "admin", password.toCharArray()))
                .build());
    }

    String uri(String credentials, String options) {
        return "mongodb://" + (credentials.isEmpty() ? "" : credentials + "@") + "127.0.0.1:" + proxy.port() + "/"
                + options;
    }

    @Override
    public void close() throws IOException {
        proxy.close();
        archive.close();
        if (usersFile != null) {
            Files.deleteIfExists(usersFile);
        }
    }
}
