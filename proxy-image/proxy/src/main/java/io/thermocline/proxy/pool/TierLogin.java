package io.thermocline.proxy.pool;

import com.mongodb.MongoCredential;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.security.scram.ScramClientConversation;
import io.thermocline.security.scram.ScramFailure;
import io.thermocline.security.scram.ScramMechanism;
import io.thermocline.wire.OpMsg;
import org.bson.BsonBinary;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The data plane's own SCRAM login on each new pooled connection to a tier, with the credentials
 * of that tier's connection string (mechanism SCRAM-SHA-256 unless {@code authMechanism=SCRAM-SHA-1}).
 * The server's signature is checked too. A refused login fails the connection with a message
 * that names the user and the tier, never the password.
 */
public final class TierLogin {
    private static final TierLogin NONE = new TierLogin(null, null);

    private final MongoCredential credential;
    private final ScramMechanism mechanism;
    /** Why the tier refused the last login (its credentials are wrong), or null once one succeeded: readiness reports it. */
    private volatile String refused;
    private volatile boolean succeeded;

    private TierLogin(MongoCredential credential, ScramMechanism mechanism) {
        this.credential = credential;
        this.mechanism = mechanism;
    }

    public static TierLogin none() {
        return NONE;
    }

    /** The login the connection string asks for; {@code credential} null means none. */
    public static TierLogin of(MongoCredential credential, String field) {
        if (credential == null) {
            return NONE;
        }
        String name = credential.getMechanism();
        ScramMechanism m = name == null ? ScramMechanism.SCRAM_SHA_256 : ScramMechanism.byMongoName(name).orElseThrow(() ->
                new IllegalArgumentException(field + ": authMechanism=" + name + " is not supported by the proxy's pools;"
                        + " use SCRAM-SHA-256 or SCRAM-SHA-1"));
        return new TierLogin(credential, m);
    }

    public CompletableFuture<Void> login(BackendConnection c, Duration timeout) {
        if (credential == null) {
            return CompletableFuture.completedFuture(null);
        }
        ScramClientConversation scram = new ScramClientConversation(mechanism, credential.getUserName(), credential.getPassword());
        String db = credential.getSource();
        BsonDocument start = new BsonDocument("saslStart", new BsonInt32(1)).append("mechanism", new BsonString(mechanism.mongoName()))
                .append("payload", new BsonBinary(scram.clientFirst()))
                .append("options", new BsonDocument("skipEmptyExchange", BsonBoolean.TRUE)).append("$db", new BsonString(db));
        return step(c, start, timeout).thenCompose(first -> {
            byte[] proof = guarded(() -> scram.clientFinal(first.getBinary("payload").getData()));
            return step(c, next(first, proof, db), timeout);
        }).thenCompose(last -> {
            guarded(() -> {
                scram.verifyServerFinal(last.getBinary("payload").getData());
                return null;
            });
            return last.getBoolean("done", BsonBoolean.FALSE).getValue() ? CompletableFuture.completedFuture(null)
                    : step(c, next(last, new byte[0], db), timeout).thenApply(x -> null);
        }).thenRun(() -> {
            refused = null;
            succeeded = true;
        });
    }

    /** Whether this login has anything to prove: the tier's URI carries credentials. */
    public boolean needed() {
        return credential != null;
    }

    /** Whether a login has succeeded since the last refusal (or ever). */
    public boolean succeeded() {
        return credential == null || (succeeded && refused == null);
    }

    /** Why the tier refused the data plane's last login (its user's name and the tier's answer, never the password), if it did. */
    public Optional<String> refusal() {
        return Optional.ofNullable(refused);
    }

    private static BsonDocument next(BsonDocument previous, byte[] payload, String db) {
        return new BsonDocument("saslContinue", new BsonInt32(1)).append("conversationId", previous.get("conversationId"))
                .append("payload", new BsonBinary(payload)).append("$db", new BsonString(db));
    }

    private CompletableFuture<BsonDocument> step(BackendConnection c, BsonDocument command, Duration timeout) {
        return c.roundTrip(OpMsg.request(BackendConnection.nextRequestId(), command), timeout).thenApply(reply -> {
            BsonDocument body = reply.body();
            if (body.getNumber("ok", new BsonInt32(0)).intValue() != 1) {
                c.close();
                String why = "the data plane's user " + credential.getUserName() + "@" + credential.getSource()
                        + " could not log in to " + c.address() + ": " + body.getString("errmsg", new BsonString("refused")).getValue()
                        + "; check the credentials in the tier's connection string";
                refused = why;
                succeeded = false;
                throw new BackendUnavailableException(why, false);
            }
            return body;
        });
    }

    private interface ScramStep<T> {
        T run() throws ScramFailure;
    }

    private <T> T guarded(ScramStep<T> s) {
        try {
            return s.run();
        } catch (ScramFailure e) {
            String why = "the tier's SCRAM answer was refused for " + credential.getUserName() + "@" + credential.getSource() + ": " + e.getMessage();
            refused = why;
            succeeded = false;
            throw new CompletionException(new BackendUnavailableException(why, false));
        }
    }
}
