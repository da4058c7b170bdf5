package io.thermocline.proxy.auth;

import com.mongodb.reactivestreams.client.MongoClients;
import io.thermocline.config.AuthConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.proxy.tls.TierTls;
import io.thermocline.security.authentication.Authenticator;
import io.thermocline.security.authentication.ConnectionAuth;
import io.thermocline.security.authentication.LoginThrottle;
import io.thermocline.security.authentication.StoredUser;
import io.thermocline.security.authentication.UserDirectory;
import io.thermocline.security.roles.Privileges;
import io.thermocline.security.roles.ResourcePattern;
import io.thermocline.tiering.worker.TierClients;
import io.thermocline.wire.OpMsg;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The proxy's client-facing security: authentication (SCRAM through {@link Authenticator}) and
 * authorization: since the proxy's backend connections are its own, it checks every command
 * against the privileges of the user the connection logged in as ({@link CommandPrivileges}). The server calls it at two points only: {@link #intercept}
 * when a command arrives, and {@link #hello} when it builds a handshake reply.
 */
public final class ProxySecurity implements AutoCloseable {
    /** {@code auth.mode}: {@code disabled} lets unauthenticated clients do anything, as mongod without {@code --auth}. */
    public enum Mode {
        DISABLED,
        REQUIRED
    }

    static final int UNAUTHORIZED = 13;

    /** Commands mongod answers before authentication. */
    private static final Set<String> WITHOUT_AUTH = Set.of(
            "hello",
            "isMaster",
            "ismaster",
            "saslStart",
            "saslContinue",
            "authenticate",
            "logout",
            "getnonce",
            "ping",
            "buildInfo",
            "buildinfo",
            "connectionStatus",
            "endSessions");

    private final Mode mode;
    private final Authenticator authenticator;
    private final ClientTls tls;
    private final TierTls tierTls;
    private final AuthMetrics metrics = new AuthMetrics();

    public ProxySecurity(Mode mode, UserDirectory users, LoginThrottle throttle) {
        this(mode, users, throttle, ClientTls.disabled(), TierTls.off());
    }

    public ProxySecurity(Mode mode, UserDirectory users, LoginThrottle throttle, ClientTls tls) {
        this(mode, users, throttle, tls, TierTls.off());
    }

    public ProxySecurity(Mode mode, UserDirectory users, LoginThrottle throttle, ClientTls tls, TierTls tierTls) {
        this.mode = mode;
        this.authenticator = new Authenticator(users, throttle, metrics);
        this.tls = tls;
        this.tierTls = tierTls;
    }

    /** No authentication required and no users: the proxy of a trusted network, and of the tests that do not test this. */
    public static ProxySecurity disabled() {
        return new ProxySecurity(Mode.DISABLED, UserDirectory.none(), LoginThrottle.off());
    }

    /**
     * Security as {@code auth.*} configures it. Archive users are read with the credentials of
     * {@code tiers.archive.uri}: that user needs {@code viewUser} on every database (docs/security.md).
     */
    public static ProxySecurity from(ThermoclineConfig config) {
        AuthConfig a = config.auth();
        UserDirectory users = UserDirectory.none();
        for (String source : a.users()) {
            UserDirectory next = source.equals("file")
                    ? new UsersFile(Path.of(a.usersFile()))
                    : new ArchiveUsers(
                            MongoClients.create(TierClients.settings(
                                            config.tiers().archive().uri(), config.tls())
                                    .applicationName("thermocline-proxy-users")
                                    .build()),
                            a.refreshInterval(),
                            a.missRetryInterval(),
                            Duration.ofMinutes(5));
            users = users == UserDirectory.none() ? next : UserDirectory.either(users, next);
        }
        LoginThrottle throttle =
                new LoginThrottle(a.failedLoginDelay(), a.maxFailedLoginDelay(), Duration.ofMinutes(10));
        return new ProxySecurity(
                a.mode().equals("required") ? Mode.REQUIRED : Mode.DISABLED,
                users,
                throttle,
                ClientTls.from(config.tls()),
                TierTls.from(config.tls()));
    }

    /** Login, throttling and authorization counters, for the proxy's /metrics. */
    public AuthMetrics metrics() {
        return metrics;
    }

    public Mode mode() {
        return mode;
    }

    /** Hook 3, the pipeline: TLS for client connections ({@code tls.*}). */
    public ClientTls tls() {
        return tls;
    }

    /** TLS for the proxy's pooled connections to the tiers ({@code tls.tierCaFile}). */
    public TierTls tierTls() {
        return tierTls;
    }

    public ConnectionAuth open(SocketAddress remote) {
        return new ConnectionAuth(remote, mode == Mode.REQUIRED);
    }

    /** A connection whose verified client certificate, if any, {@code certificateSubject} reads (x.509 logins). */
    public ConnectionAuth open(SocketAddress remote, Supplier<Optional<String>> certificateSubject) {
        return new ConnectionAuth(remote, mode == Mode.REQUIRED, certificateSubject);
    }

    /**
     * Hook 1, where a command arrives: answers authentication commands, {@code connectionStatus}
     * and refusals itself; empty means "forward the command as usual".
     */
    public Optional<CompletableFuture<BsonDocument>> intercept(ConnectionAuth conn, OpMsg msg) {
        String command = msg.commandName();
        BsonDocument body = msg.body();
        switch (command) {
            case "saslStart":
                return Optional.of(authenticator.saslStart(conn, body, database(body)));
            case "saslContinue":
                return Optional.of(authenticator.saslContinue(conn, body));
            case "logout":
                return Optional.of(CompletableFuture.completedFuture(authenticator.logout(conn)));
            case "authenticate":
                if (body.isString("mechanism")
                        && body.getString("mechanism").getValue().equals("MONGODB-X509")) {
                    return Optional.of(authenticator.authenticateX509(conn, body, database(body)));
                }
                return Optional.of(done(Authenticator.error(
                        334,
                        "MechanismUnavailable",
                        "the Thermocline proxy supports SCRAM-SHA-256 and SCRAM-SHA-1 through saslStart, and MONGODB-X509"
                                + " through authenticate, not "
                                + (body.isString("mechanism")
                                        ? body.getString("mechanism").getValue()
                                        : "this mechanism"))));
            case "getnonce":
                return Optional.of(done(Authenticator.error(59, "CommandNotFound", "no such command: 'getnonce'")));
            case "connectionStatus":
                return Optional.of(done(connectionStatus(conn, body)));
            default:
                break;
        }
        if (mode == Mode.DISABLED) {
            return Optional.empty();
        }
        if (!conn.isAuthenticated()) {
            if (WITHOUT_AUTH.contains(command)) {
                return Optional.empty();
            }
            metrics.unauthorized(command, false);
            return Optional.of(done(Authenticator.error(
                    UNAUTHORIZED, "Unauthorized", "command " + command + " requires authentication")));
        }
        // Only now, past the disabled mode's early return (the request path's common case), are the body's
        // fields looked up again: each lookup scans the raw command, and folding the updates sequence copies it.
        // Upserts hide in the updates sequence; other bodies are enough, and an insert's documents are never copied.
        if (command.equals("update") || command.equals("bulkWrite")) {
            body = msg.command();
        }
        String db = database(body);
        StoredUser user = conn.user().orElseThrow();
        if (!db.equals("admin") && CommandActions.adminOnly(command)) {
            metrics.unauthorized(command, true);
            return Optional.of(done(Authenticator.error(
                    UNAUTHORIZED, "Unauthorized", command + " may only be run against the admin database.")));
        }
        if (asksAboutItself(user, command, body, db)) {
            return Optional.empty();
        }
        if (command.equals("listDatabases")
                && AuthorizedDatabases.of(user, body) instanceof AuthorizedDatabases.Refused) {
            metrics.unauthorized(command, true);
            return Optional.of(done(Authenticator.error(
                    UNAUTHORIZED, "Unauthorized", "Insufficient permissions to list all databases")));
        }
        if (command.equals("listCollections")
                && AuthorizedCollections.asksForOwn(body)
                && user.privileges().anyOnDatabase(db)) {
            return Optional
                    .empty(); // mongod: any privilege in the database; the answer is filtered (CommandDispatcher)
        }
        for (CommandPrivileges.Need need : CommandPrivileges.of(db, body)) {
            if (!allows(user, need)) {
                metrics.unauthorized(command, true);
                return Optional.of(done(Authenticator.error(
                        UNAUTHORIZED,
                        "Unauthorized",
                        "not authorized on " + need.target().database() + " to execute command "
                                + describe(command, body, db))));
            }
        }
        return Optional.empty();
    }

    /** The command's {@code $db}; {@code admin} when it names none. */
    private static String database(BsonDocument body) {
        return body.isString("$db") ? body.getString("$db").getValue() : "admin";
    }

    /** The privileges to filter a listCollections of the user's own collections by; empty when it is not one, or not filtered. */
    public Optional<Privileges> ownCollections(ConnectionAuth conn, BsonDocument command) {
        return mode == Mode.REQUIRED && AuthorizedCollections.asksForOwn(command)
                ? conn.user().map(StoredUser::privileges)
                : Optional.empty();
    }

    /** What listDatabases shows this connection's user. */
    public AuthorizedDatabases.Listing databases(ConnectionAuth conn, BsonDocument command) {
        return AuthorizedDatabases.of(mode == Mode.REQUIRED ? conn.user().orElse(null) : null, command);
    }

    /** A command the proxy does not model is let through only for users with privileges on any resource (root). */
    private static boolean allows(StoredUser user, CommandPrivileges.Need need) {
        if (need.onlyIf() != null && !allows(user, need.onlyIf())) {
            return true;
        }
        boolean allowed = need.action().equals(CommandPrivileges.UNKNOWN_ACTION)
                ? user.privileges().granted().stream()
                        .anyMatch(p -> p.resource() instanceof ResourcePattern.AnyResource)
                : user.privileges().allows(need.target(), need.action());
        return allowed || (need.orElse() != null && allows(user, need.orElse()));
    }

    /** mongod lets every user read its own user document and roles. */
    private static boolean asksAboutItself(StoredUser user, String command, BsonDocument body, String db) {
        BsonValue v = body.get(command);
        if (command.equals("usersInfo")) {
            return (v.isString()
                            && db.equals(user.name().db())
                            && v.asString().getValue().equals(user.name().user()))
                    || (v instanceof BsonDocument d
                            && user.name()
                                    .toDocument()
                                    .equals(new BsonDocument("user", d.get("user", new BsonString("")))
                                            .append("db", d.get("db", new BsonString("")))));
        }
        if (command.equals("rolesInfo") && v instanceof BsonDocument d) {
            return user.roles().stream()
                    .anyMatch(r -> r.toDocument()
                            .equals(new BsonDocument("role", d.get("role", new BsonString("")))
                                    .append("db", d.get("db", new BsonString("")))));
        }
        return false;
    }

    /**
     * The command as mongod's message shows it, without its payload: {@code { insert: "orders", $db: "shop" }}. The first
     * value is shown only when it is a collection name (a number otherwise); anything else, such as eval's code, is "...".
     */
    private static String describe(String command, BsonDocument body, String db) {
        BsonValue v = body.get(command);
        String shown = v.isString()
                        && CommandActions.firstValueNamesCollection(command)
                        && v.asString().getValue().length() <= 255
                ? "\"" + v.asString().getValue() + "\""
                : v.isInt32() || v.isInt64()
                        ? String.valueOf(v.asNumber().longValue())
                        : v.isDouble() ? String.valueOf(v.asNumber().doubleValue()) : "...";
        return "{ " + command + ": " + shown + ", $db: \"" + db + "\" }";
    }

    /** Hook 2, the handshake: adds {@code saslSupportedMechs} and the answer to {@code speculativeAuthenticate}. */
    public CompletableFuture<BsonDocument> hello(ConnectionAuth conn, BsonDocument request, BsonDocument reply) {
        if (!reply.containsKey("ok") || reply.getNumber("ok").intValue() != 1) {
            return CompletableFuture.completedFuture(reply);
        }
        return authenticator
                .supportedMechanisms(request)
                .thenCompose(mechs -> authenticator.speculative(conn, request).thenApply(spec -> {
                    BsonValue ok = reply.remove("ok");
                    mechs.ifPresent(m -> reply.append("saslSupportedMechs", m));
                    spec.ifPresent(s -> reply.append("speculativeAuthenticate", s));
                    reply.append("ok", ok);
                    return reply;
                }));
    }

    private BsonDocument connectionStatus(ConnectionAuth conn, BsonDocument body) {
        BsonArray users = new BsonArray();
        BsonArray roles = new BsonArray();
        BsonDocument authInfo = new BsonDocument("authenticatedUsers", users).append("authenticatedUserRoles", roles);
        conn.user().ifPresent(u -> {
            users.add(u.name().toDocument());
            u.roles().forEach(r -> roles.add(r.toDocument()));
            if (body.getBoolean("showPrivileges", BsonBoolean.FALSE).getValue()) {
                authInfo.append("authenticatedUserPrivileges", u.privileges().toArray());
            }
        });
        return new BsonDocument("authInfo", authInfo).append("ok", new BsonDouble(1));
    }

    private static CompletableFuture<BsonDocument> done(BsonDocument reply) {
        return CompletableFuture.completedFuture(reply);
    }

    @Override
    public void close() {
        authenticator.users().close();
    }

    @Override
    public String toString() {
        return "auth=" + mode.name().toLowerCase() + " users="
                + authenticator.users().describe() + " tls=" + tls;
    }
}
