package io.thermocline.proxy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.CommandTraits;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a client's driver gets when the tiered layer's own request to a tier fails: a failover's state change errors
 * keep their code and carry the labels of the retryable-writes and transactions specifications, so the driver retries
 * on the new primary as it would against the replica set (before, they became a non-retryable OperationFailed).
 */
@Timeout(10)
class ErrorMappingTest {

    private static final MongoCommandException NOT_PRIMARY = serverError(13435, "NotPrimaryNoSecondaryOk");

    @Test
    void aStepDownMetByTheTieredLayerKeepsItsCodeAndGetsTheLabelsADriverRetriesOn() {
        assertError(find(), NOT_PRIMARY, 13435, List.of());
        assertError(retryableInsert(), NOT_PRIMARY, 13435, List.of("RetryableWriteError"));
        assertError(
                retryableInsert(),
                serverError(11602, "InterruptedDueToReplStateChange"),
                11602,
                List.of("RetryableWriteError"));
        assertError(retryableInsert(), serverError(10107, "NotWritablePrimary"), 10107, List.of("RetryableWriteError"));
        assertError(inTransaction("find"), NOT_PRIMARY, 13435, List.of("TransientTransactionError"));
        assertError(
                inTransaction("commitTransaction"),
                serverError(189, "PrimarySteppedDown"),
                189,
                List.of("RetryableWriteError", "UnknownTransactionCommitResult"));
    }

    /** A pool the driver cleared after another request's network error (an archive outage): retryable, never OperationFailed. */
    @Test
    void aClearedConnectionPoolIsTheOutageItFollows() {
        var cleared = new com.mongodb.MongoConnectionPoolClearedException(
                new com.mongodb.connection.ServerId(
                        new com.mongodb.connection.ClusterId("thermocline-proxy"),
                        new ServerAddress("127.0.0.1", 27018)),
                new com.mongodb.MongoSocketReadException(
                        "Prematurely reached end of stream", new ServerAddress("127.0.0.1", 27018)));
        RawBsonDocument reply = ErrorMapping.reply(retryableInsert(), cleared);
        assertThat(reply.getInt32("code").getValue()).isEqualTo(6);
        assertThat(reply.getArray("errorLabels").stream()
                        .map(v -> v.asString().getValue())
                        .toList())
                .containsExactly("RetryableWriteError");
    }

    /**
     * A tier's time limit on the proxy's own request (the embedded set's majority read waiting for a long write, in the
     * README's whole-collection updateMany): retryable ExceededTimeLimit, not OperationFailed (96) that drivers give up on.
     */
    @Test
    void aTiersTimeLimitOnTheProxysOwnRequestIsRetryable() {
        var timeout = new com.mongodb.MongoExecutionTimeoutException(
                50, "a majority read found a write statement that did not reach the oplog within 30s");
        RawBsonDocument reply = ErrorMapping.reply(retryableInsert(), timeout);
        assertThat(reply.getInt32("code").getValue()).isEqualTo(262);
        assertThat(reply.getString("errmsg").getValue()).contains("retry", "did not reach the oplog");
        assertThat(reply.getArray("errorLabels").stream()
                        .map(v -> v.asString().getValue())
                        .toList())
                .containsExactly("RetryableWriteError");
    }

    /** The client's own maxTimeMS, run out at the tier: mongod's MaxTimeMSExpired, which drivers do not retry. */
    @Test
    void theClientsOwnTimeLimitRunOutAtATierIsMaxTimeMSExpired() {
        var timeout = new com.mongodb.MongoExecutionTimeoutException(50, "operation exceeded time limit");
        CommandTraits limited = CommandTraits.of(
                "insert",
                BsonDocument.parse(
                        "{insert: 'c', maxTimeMS: 100, lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==',"
                                + " subType: '04'}}}, txnNumber: {$numberLong: '1'}, $db: 'd'}"));
        RawBsonDocument reply = ErrorMapping.reply(limited, timeout);
        assertThat(reply.getInt32("code").getValue()).isEqualTo(50);
        assertThat(reply.getString("codeName").getValue()).isEqualTo("MaxTimeMSExpired");
        assertThat(reply.containsKey("errorLabels")).as(reply.toJson()).isFalse();
    }

    @Test
    void otherServerErrorsOfTheTieredLayerStayAnOperationFailedThatNamesThem() {
        RawBsonDocument reply = ErrorMapping.reply(retryableInsert(), serverError(2, "BadValue"));
        assertThat(reply.getInt32("code").getValue()).isEqualTo(96);
        assertThat(reply.getString("errmsg").getValue()).contains("BadValue");
        assertThat(reply.containsKey("errorLabels")).isFalse();
    }

    private static void assertError(CommandTraits command, Exception cause, int code, List<String> labels) {
        RawBsonDocument reply = ErrorMapping.reply(command, cause);
        assertThat(reply.getInt32("code").getValue())
                .as(command.name() + " " + cause.getMessage())
                .isEqualTo(code);
        assertThat(reply.getString("errmsg").getValue()).contains("changed primary");
        List<String> got = reply.containsKey("errorLabels")
                ? reply.getArray("errorLabels").stream()
                        .map(v -> v.asString().getValue())
                        .toList()
                : List.of();
        assertThat(got).as(command.name() + " labels").isEqualTo(labels);
    }

    private static MongoCommandException serverError(int code, String name) {
        return new MongoCommandException(
                new BsonDocument("ok", new BsonInt32(0))
                        .append("code", new BsonInt32(code))
                        .append("codeName", new BsonString(name))
                        .append("errmsg", new BsonString("not primary")),
                new ServerAddress("127.0.0.1", 27018));
    }

    private static CommandTraits find() {
        return CommandTraits.of(
                "find", new BsonDocument("find", new BsonString("orders")).append("$db", new BsonString("shop")));
    }

    private static CommandTraits retryableInsert() {
        return CommandTraits.of(
                "insert",
                new BsonDocument("insert", new BsonString("orders"))
                        .append("$db", new BsonString("shop"))
                        .append(
                                "documents",
                                new BsonArray(List.<BsonValue>of(new BsonDocument("_id", new BsonInt32(1)))))
                        .append("lsid", new BsonDocument("id", new BsonInt32(1)))
                        .append("txnNumber", new BsonInt64(1)));
    }

    private static CommandTraits inTransaction(String name) {
        return CommandTraits.of(
                name,
                new BsonDocument(name, name.equals("find") ? new BsonString("orders") : new BsonInt32(1))
                        .append("$db", new BsonString(name.equals("find") ? "shop" : "admin"))
                        .append("lsid", new BsonDocument("id", new BsonInt32(1)))
                        .append("txnNumber", new BsonInt64(1))
                        .append("autocommit", BsonBoolean.FALSE));
    }
}
