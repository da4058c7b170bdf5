package io.thermocline.proxy.tiered.writes;

import com.mongodb.WriteConcern;
import com.mongodb.bulk.WriteConcernError;
import io.thermocline.proxy.command.MongoError;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * The client's {@code writeConcern} applied to a transaction the proxy commits for its write (a guarded
 * write, a delete): the commit waits as the client asked (w, j, wtimeout), and a write concern the commit
 * did not meet reaches the client as mongod reports it, the write standing ({@code writeConcernError}
 * next to the write's own result, ok 1). The proxy's own floor is {@code w: "majority"}: a weaker request
 * (none, w 0, w 1) still commits with it, which no client can tell from its own but by latency, and an
 * unacknowledged write ({@code w: 0}) is executed all the same (transactions have no unacknowledged commit).
 * A write concern mongod refuses when it parses the command is refused the same way, before anything runs
 * ({@link #refusal}).
 */
record ClientWriteConcern(WriteConcern commit) {

    static final ClientWriteConcern PROXY_DEFAULT = new ClientWriteConcern(WriteConcern.MAJORITY);

    /** mongod's {@code repl::ReplSetConfig::kMaxMembers}: no w may ask for more members than a replica set can have. */
    static final int MAX_MEMBERS = 50;

    /** The fields mongod's write concern parser knows; the last three it accepts and ignores (older drivers sent them). */
    private static final Set<String> FIELDS =
            Set.of("w", "j", "wtimeout", "fsync", "provenance", "wElectionId", "wOpTime", "getLastError");

    /** What the client is told instead of running the write: mongod's error for the same write concern. */
    record Refusal(MongoError error, String message) {
        RawBsonDocument reply() {
            return error.reply(message);
        }
    }

    /**
     * Why mongod refuses {@code command}'s {@code writeConcern} when it parses the command (before it runs it), as
     * its {@code WriteConcernOptions::parse} and IDL do on 5.0-8.0; empty when mongod accepts it. What mongod finds
     * only while waiting (a tag the replica set does not define, more members than it has) is not a refusal: the
     * write stands and its reply carries {@code writeConcernError}, which the commit gives.
     */
    static Optional<Refusal> refusal(BsonDocument command) {
        BsonValue value = command.get("writeConcern");
        if (value == null) {
            return Optional.empty();
        }
        if (!value.isDocument()) {
            return refused(
                    MongoError.TYPE_MISMATCH,
                    "\"writeConcern\" had the wrong type. Expected object, found " + typeName(value));
        }
        BsonDocument wc = value.asDocument();
        for (Map.Entry<String, BsonValue> field : wc.entrySet()) {
            String name = field.getKey();
            BsonValue v = field.getValue();
            if (!FIELDS.contains(name)) {
                return refused(MongoError.UNKNOWN_FIELD, "BSON field 'writeConcern." + name + "' is an unknown field.");
            }
            if ((name.equals("j") || name.equals("fsync")) && !v.isBoolean() && !v.isNumber() && !v.isNull()) {
                return refused(
                        MongoError.TYPE_MISMATCH,
                        "BSON field 'writeConcern." + name + "' is the wrong type '" + typeName(v)
                                + "', expected types '[bool, long, int, decimal, double]'");
            }
            if (name.equals("w")) {
                Optional<Refusal> w = wRefusal(v);
                if (w.isPresent()) {
                    return w;
                }
            }
        }
        if (Boolean.TRUE.equals(flag(wc.get("j"))) && Boolean.TRUE.equals(flag(wc.get("fsync")))) {
            return refused(MongoError.FAILED_TO_PARSE, "fsync and j options cannot be used together");
        }
        return Optional.empty();
    }

    private static Optional<Refusal> wRefusal(BsonValue w) {
        if (w.isNumber()) {
            long n = w.asNumber().longValue();
            return n < 0 || n > MAX_MEMBERS
                    ? refused(
                            MongoError.FAILED_TO_PARSE,
                            "w has to be a non-negative number and not greater than " + MAX_MEMBERS + "; found: " + n)
                    : Optional.empty();
        }
        if (w.isString() || w.isNull() || w.getBsonType() == BsonType.UNDEFINED) {
            return Optional.empty();
        }
        if (w.isDocument()) {
            if (w.asDocument().isEmpty()) {
                return refused(MongoError.FAILED_TO_PARSE, "tagged write concern requires tags");
            }
            for (Map.Entry<String, BsonValue> tag : w.asDocument().entrySet()) {
                if (!tag.getValue().isNumber()) {
                    return refused(
                            MongoError.FAILED_TO_PARSE,
                            "tags must be a single level document with only number values; found: " + tag.getKey()
                                    + ": " + tag.getValue());
                }
            }
            return Optional.empty();
        }
        return refused(MongoError.FAILED_TO_PARSE, "w has to be a number, string, or object; found: " + typeName(w));
    }

    private static Optional<Refusal> refused(MongoError error, String message) {
        return Optional.of(new Refusal(error, message));
    }

    /** A {@code j} or {@code fsync} as mongod reads it (a bool, or a number: true unless 0); null when absent or null. */
    private static Boolean flag(BsonValue value) {
        if (value == null || value.isNull()) {
            return null;
        }
        if (value.isBoolean()) {
            return value.asBoolean().getValue();
        }
        return value.isNumber() ? value.asNumber().doubleValue() != 0 : null;
    }

    /** The type name mongod's messages use ({@code typeName(BSONType)}). */
    private static String typeName(BsonValue value) {
        return switch (value.getBsonType()) {
            case DOUBLE -> "double";
            case STRING -> "string";
            case DOCUMENT -> "object";
            case ARRAY -> "array";
            case BINARY -> "binData";
            case UNDEFINED -> "undefined";
            case OBJECT_ID -> "objectId";
            case BOOLEAN -> "bool";
            case DATE_TIME -> "date";
            case NULL -> "null";
            case REGULAR_EXPRESSION -> "regex";
            case DB_POINTER -> "dbPointer";
            case JAVASCRIPT -> "javascript";
            case SYMBOL -> "symbol";
            case JAVASCRIPT_WITH_SCOPE -> "javascriptWithScope";
            case INT32 -> "int";
            case TIMESTAMP -> "timestamp";
            case INT64 -> "long";
            case DECIMAL128 -> "decimal";
            case MIN_KEY -> "minKey";
            case MAX_KEY -> "maxKey";
            case END_OF_DOCUMENT -> "missing";
        };
    }

    /** The write concern to commit {@code command}'s transaction with. */
    static ClientWriteConcern of(BsonDocument command) {
        BsonValue value = command.get("writeConcern");
        if (value == null || !value.isDocument()) {
            return PROXY_DEFAULT;
        }
        BsonDocument wc = value.asDocument();
        BsonValue w = wc.get("w");
        WriteConcern commit;
        if (w != null && w.isString()) {
            commit = new WriteConcern(w.asString().getValue());
        } else if (w != null && w.isNumber() && w.asNumber().intValue() > 1) {
            commit = new WriteConcern(w.asNumber().intValue());
        } else {
            commit = WriteConcern.MAJORITY; // the floor (see above); the client's wtimeout was for a weaker wait
            Boolean j = flag(wc.get("j"));
            return j != null ? new ClientWriteConcern(commit.withJournal(j)) : PROXY_DEFAULT;
        }
        // mongod takes a wtimeout of another type as none
        if (wc.isNumber("wtimeout") && wc.getNumber("wtimeout").longValue() > 0) {
            commit = commit.withWTimeout(wc.getNumber("wtimeout").longValue(), TimeUnit.MILLISECONDS);
        }
        Boolean j = flag(wc.get("j"));
        if (j != null) {
            commit = commit.withJournal(j);
        }
        return new ClientWriteConcern(commit);
    }

    /** {@code reply} (a write's result) with the commit's unmet write concern, in the shape mongod replies it. */
    static BsonDocument withError(BsonDocument reply, WriteConcernError error) {
        BsonDocument wce = new BsonDocument("code", new BsonInt32(error.getCode()));
        if (error.getCodeName() != null && !error.getCodeName().isEmpty()) {
            wce.append("codeName", new BsonString(error.getCodeName()));
        }
        wce.append("errmsg", new BsonString(error.getMessage()));
        if (error.getDetails() != null && !error.getDetails().isEmpty()) {
            wce.append("errInfo", error.getDetails());
        }
        return withError(reply, wce);
    }

    /** {@code reply} with {@code writeConcernError} (none when null) placed before {@code ok}, as mongod orders it. */
    static BsonDocument withError(BsonDocument reply, BsonDocument writeConcernError) {
        if (writeConcernError == null) {
            return reply;
        }
        BsonDocument out = new BsonDocument();
        reply.forEach((k, v) -> {
            if (k.equals("ok")) {
                out.append("writeConcernError", writeConcernError);
            }
            if (!k.equals("writeConcernError")) {
                out.append(k, v);
            }
        });
        if (!out.containsKey("writeConcernError")) {
            out.append("writeConcernError", writeConcernError);
        }
        return out;
    }

    /** The {@code writeConcernError} of a reply, or {@code kept} when it has none (a write run as several transactions reports one). */
    static BsonDocument errorOf(BsonDocument reply, BsonDocument kept) {
        return reply.isDocument("writeConcernError") ? reply.getDocument("writeConcernError") : kept;
    }
}
