package io.thermocline.security.authentication;

import io.thermocline.security.UserName;
import io.thermocline.security.scram.ClientFirst;
import io.thermocline.security.scram.ScramFailure;
import io.thermocline.security.scram.ScramMechanism;
import io.thermocline.security.scram.ScramServerConversation;
import java.nio.charset.StandardCharsets;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The SASL commands as mongod answers them: {@code saslStart}, {@code saslContinue} (with
 * {@code options.skipEmptyExchange}), {@code logout}, speculative authentication and
 * {@code saslSupportedMechs} in {@code hello}. Every failure is the same
 * {@code 18 AuthenticationFailed "Authentication failed."}: the reason goes to the log only, and
 * neither the password nor any stored key is ever logged.
 */
public final class Authenticator {
    private static final Logger LOG = LoggerFactory.getLogger(Authenticator.class);
    private static final int AUTHENTICATION_FAILED = 18;
    private static final int MECHANISM_UNAVAILABLE = 334;
    private static final String X509 = "MONGODB-X509";

    private final UserDirectory users;
    private final LoginThrottle throttle;
    private final ScramServerConversation.Decoys decoys = new ScramServerConversation.Decoys();
    private final AuthEvents events;

    public Authenticator(UserDirectory users, LoginThrottle throttle) {
        this(users, throttle, AuthEvents.NONE);
    }

    public Authenticator(UserDirectory users, LoginThrottle throttle, AuthEvents events) {
        this.users = users;
        this.throttle = throttle;
        this.events = events;
    }

    public UserDirectory users() {
        return users;
    }

    /** {@code saslStart} on database {@code db}. */
    public CompletableFuture<BsonDocument> saslStart(ConnectionAuth conn, BsonDocument body, String db) {
        Duration wait = throttle.admit(conn.sourceAddress(), attemptedUser(body, db));
        if (!wait.isZero()) {
            events.throttled();
        }
        Executor after = wait.isZero() ? Runnable::run : CompletableFuture.delayedExecutor(wait.toNanos(), TimeUnit.NANOSECONDS);
        return CompletableFuture.supplyAsync(() -> body, after).thenCompose(b -> start(conn, b, db));
    }

    /** The user a saslStart tries ({@code user@db}, {@code ?@db} when its payload names none): what the throttle counts it against. */
    private static String attemptedUser(BsonDocument body, String db) {
        try {
            return new UserName(ClientFirst.parse(payload(body)).user(), db).toString();
        } catch (ScramFailure | RuntimeException e) {
            return "?@" + db;
        }
    }

    private CompletableFuture<BsonDocument> start(ConnectionAuth conn, BsonDocument body, String db) {
        conn.endConversation();
        String mechanismName = body.isString("mechanism") ? body.getString("mechanism").getValue() : "";
        Optional<ScramMechanism> mechanism = ScramMechanism.byMongoName(mechanismName);
        if (mechanism.isEmpty()) {
            return CompletableFuture.completedFuture(error(MECHANISM_UNAVAILABLE, "MechanismUnavailable",
                    "Received authentication for mechanism " + printable(mechanismName) + " which is not enabled; the Thermocline"
                            + " proxy supports SCRAM-SHA-256 and SCRAM-SHA-1"));
        }
        ClientFirst first;
        try {
            first = ClientFirst.parse(payload(body));
        } catch (ScramFailure e) {
            return CompletableFuture.completedFuture(failed(conn, mechanismName, "?@" + db, e.getMessage()));
        }
        UserName name = new UserName(first.user(), db);
        boolean skipEmpty = body.get("options") instanceof BsonDocument o && o.getBoolean("skipEmptyExchange", BsonBoolean.FALSE).getValue();
        return users.find(name).handle((found, error) -> {
            if (error != null) {
                LOG.warn("event=user_lookup_failed user={} source={} error=\"{}\"", name, users.describe(), error.toString());
                return failed(conn, mechanismName, name.toString(), "the user directory could not be read");
            }
            if (found.isPresent() && found.get().credential(mechanism.get()).isEmpty()) {
                // As mongod: a user without this mechanism's credential fails at once (saslSupportedMechs told the driver
                // already), so a speculative SCRAM-SHA-256 attempt of a SHA-1-only user lets the driver fall back.
                // Not a guess at a password: it does not count towards the address's delay.
                conn.endConversation();
                events.login(mechanismName, false);
                return error(AUTHENTICATION_FAILED, "AuthenticationFailed", "Authentication failed.");
            }
            ScramServerConversation conversation = ScramServerConversation.open(mechanism.get(), first,
                    found.flatMap(u -> u.credential(mechanism.get())), decoys);
            int id = conn.begin(conversation, db, skipEmpty);
            return new BsonDocument("conversationId", new BsonInt32(id)).append("done", BsonBoolean.FALSE)
                    .append("payload", new BsonBinary(conversation.serverFirst())).append("ok", new BsonDouble(1));
        });
    }

    public CompletableFuture<BsonDocument> saslContinue(ConnectionAuth conn, BsonDocument body) {
        BsonValue id = body.get("conversationId");
        Optional<ScramServerConversation> found = id != null && id.isNumber() ? conn.conversation(id.asNumber().intValue()) : Optional.empty();
        if (found.isEmpty()) {
            return CompletableFuture.completedFuture(failed(conn, "", "?", "saslContinue without a conversation in progress"));
        }
        ScramServerConversation conversation = found.get();
        UserName name = new UserName(conversation.user(), conn.conversationDb());
        try {
            byte[] payload = payload(body);
            BsonDocument reply = new BsonDocument("conversationId", new BsonInt32(id.asNumber().intValue()));
            if (!conversation.authenticated()) {
                byte[] serverFinal = conversation.receiveProof(payload, conn.skipEmptyExchange());
                reply.append("done", BsonBoolean.valueOf(conversation.done())).append("payload", new BsonBinary(serverFinal));
            } else {
                conversation.receiveEmpty(payload);
                reply.append("done", BsonBoolean.TRUE).append("payload", new BsonBinary(new byte[0]));
            }
            if (!conversation.done()) {
                return CompletableFuture.completedFuture(reply.append("ok", new BsonDouble(1)));
            }
            conn.endConversation();
            return users.find(name).thenApply(user -> {
                if (user.isEmpty()) {
                    return failed(conn, conversation.mechanism().mongoName(), name.toString(), "the user was dropped during the conversation");
                }
                conn.authenticated(user.get());
                throttle.succeeded(conn.sourceAddress(), name.toString());
                events.login(conversation.mechanism().mongoName(), true);
                LOG.info("event=auth_succeeded user={} mechanism={} remote={}", name, conversation.mechanism().mongoName(),
                        conn.sourceAddress().getHostAddress());
                return reply.append("ok", new BsonDouble(1));
            });
        } catch (ScramFailure e) {
            return CompletableFuture.completedFuture(failed(conn, conversation.mechanism().mongoName(), name.toString(), e.getMessage()));
        }
    }

    /**
     * {@code authenticate} with MONGODB-X509 on {@code $external}, as mongod: the user is the
     * subject of the client certificate TLS verified; a {@code user} field must name that subject.
     */
    public CompletableFuture<BsonDocument> authenticateX509(ConnectionAuth conn, BsonDocument body, String db) {
        return authenticateX509(conn, body, db, true);
    }

    /**
     * {@code counted}: a failure counts towards the address's delay, the failure metric and the log. A
     * speculative attempt's does not, since the driver follows it with the explicit command, whose
     * failure does: one login, one failure.
     */
    private CompletableFuture<BsonDocument> authenticateX509(ConnectionAuth conn, BsonDocument body, String db, boolean counted) {
        Optional<String> subject = conn.certificateSubject();
        if (!db.equals(UserName.EXTERNAL)) {
            return CompletableFuture.completedFuture(x509Failed(conn, counted, "?@" + db, "x.509 users live in $external"));
        }
        if (subject.isEmpty()) {
            return CompletableFuture.completedFuture(x509Failed(conn, counted, "?@" + db, "no verified client certificate"));
        }
        if (body.isString("user") && !body.getString("user").getValue().equals(subject.get())) {
            return CompletableFuture.completedFuture(x509Failed(conn, counted, subject.get() + "@" + db,
                    "the user field names another subject than the certificate"));
        }
        UserName name = new UserName(subject.get(), UserName.EXTERNAL);
        return users.find(name).handle((user, error) -> {
            if (error != null || user.isEmpty()) {
                return x509Failed(conn, counted, name.toString(), error != null ? "the user directory could not be read" : "no such user");
            }
            conn.endConversation();
            conn.authenticated(user.get());
            throttle.succeeded(conn.sourceAddress(), name.toString());
            events.login(X509, true);
            LOG.info("event=auth_succeeded user={} mechanism={} remote={}", name, X509, conn.sourceAddress().getHostAddress());
            return new BsonDocument("dbname", new BsonString(UserName.EXTERNAL)).append("user", new BsonString(subject.get()))
                    .append("ok", new BsonDouble(1));
        });
    }

    private BsonDocument x509Failed(ConnectionAuth conn, boolean counted, String user, String reason) {
        if (counted) {
            return failed(conn, X509, user, reason);
        }
        LOG.debug("event=speculative_auth_not_answered user={} mechanism={} reason=\"{}\"", printable(user), X509, reason);
        return error(AUTHENTICATION_FAILED, "AuthenticationFailed", "Authentication failed.");
    }

    public BsonDocument logout(ConnectionAuth conn) {
        conn.endConversation();
        conn.loggedOut();
        return new BsonDocument("ok", new BsonDouble(1));
    }

    /**
     * The {@code speculativeAuthenticate} field of a hello reply, or empty: a speculative attempt
     * that fails is simply not answered (as mongod), and the driver then authenticates the usual
     * way, getting that command's error. Two forms, as the auth spec has them: a SCRAM
     * {@code saslStart}, answered with the server-first message, and an x.509 {@code authenticate}
     * on {@code $external}, answered with {@code dbname} and {@code user}: logged in already.
     */
    public CompletableFuture<Optional<BsonDocument>> speculative(ConnectionAuth conn, BsonDocument request) {
        if (!(request.get("speculativeAuthenticate") instanceof BsonDocument spec)) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        CompletableFuture<BsonDocument> attempt;
        if (spec.containsKey("saslStart")) {
            attempt = saslStart(conn, spec, spec.isString("db") ? spec.getString("db").getValue() : "admin");
        } else if (spec.containsKey("authenticate") && spec.isString("mechanism")
                && spec.getString("mechanism").getValue().equals(X509)) {
            attempt = authenticateX509(conn, spec, spec.isString("db") ? spec.getString("db").getValue() : UserName.EXTERNAL, false);
        } else {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return attempt.thenApply(reply -> {
            if (reply.getNumber("ok").intValue() != 1) {
                return Optional.empty();
            }
            reply.remove("ok");
            return Optional.of(reply);
        });
    }

    /**
     * The mechanisms of the user {@code saslSupportedMechs} names. An unknown user gets both, so
     * the handshake does not tell which users exist.
     */
    public CompletableFuture<Optional<BsonArray>> supportedMechanisms(BsonDocument request) {
        if (!request.isString("saslSupportedMechs")) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        UserName name;
        try {
            name = UserName.parseQualified(request.getString("saslSupportedMechs").getValue());
        } catch (IllegalArgumentException e) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return users.find(name).handle((user, error) -> {
            BsonArray names = new BsonArray();
            if (error != null || user.isEmpty() || user.get().mechanisms().isEmpty()) {
                // exactly what a user with both credentials gets, in mongod's order (StoredUser.mechanisms()): nothing tells them apart
                names.add(new BsonString(ScramMechanism.SCRAM_SHA_256.mongoName()));
                names.add(new BsonString(ScramMechanism.SCRAM_SHA_1.mongoName()));
            } else {
                user.get().mechanisms().forEach(m -> names.add(new BsonString(m.mongoName())));
            }
            return Optional.of(names);
        });
    }

    private BsonDocument failed(ConnectionAuth conn, String mechanism, String user, String reason) {
        conn.endConversation();
        throttle.failed(conn.sourceAddress(), user);
        events.login(mechanism, false);
        LOG.info("event=auth_failed user={} mechanism={} remote={} failures={} reason=\"{}\"", printable(user), printable(mechanism),
                conn.sourceAddress().getHostAddress(), throttle.failures(conn.sourceAddress(), user), reason);
        return error(AUTHENTICATION_FAILED, "AuthenticationFailed", "Authentication failed.");
    }

    public static BsonDocument error(int code, String codeName, String message) {
        return new BsonDocument("ok", new BsonDouble(0)).append("errmsg", new BsonString(message))
                .append("code", new BsonInt32(code)).append("codeName", new BsonString(codeName));
    }

    private static byte[] payload(BsonDocument body) throws ScramFailure {
        BsonValue p = body.get("payload");
        if (p instanceof BsonBinary bin) {
            return bin.getData();
        }
        if (p instanceof BsonString s) {
            // Legacy clients send the payload as a string.
            return s.getValue().getBytes(StandardCharsets.UTF_8);
        }
        throw new ScramFailure("missing payload");
    }

    /** User-controlled text in one log line: short, and no quotes or line breaks to forge fields with. */
    private static String printable(String s) {
        String cut = s.length() > 64 ? s.substring(0, 64) + "..." : s;
        return cut.replaceAll("[^\\x21-\\x7e]", "?").replace('"', '?');
    }
}
