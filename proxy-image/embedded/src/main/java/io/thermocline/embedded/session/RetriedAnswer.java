package io.thermocline.embedded.session;

import io.thermocline.embedded.replication.ReplicationException;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * The answer to a retried write whose (lsid, txnNumber) already ran, as mongod gives it: mongod does not
 * store replies but finds the statement's oplog entry and derives the answer from its type for the
 * command now asking ({@code write_ops_retryability}). The same command gets what it got the first time
 * (this set stores that reply). Another command gets what mongod derives: an {@code update} over a logged
 * insert reports it upserted, over a logged update {@code n: 1, nModified: 1}, over a delete error 40638;
 * a {@code findAndModify} over a logged insert reports the upsert when it is an upsert and fails with
 * 40608 otherwise, over an update without a stored image with 40611/40612; an {@code insert} counts the
 * statements as inserted.
 */
public final class RetriedAnswer {

    private RetriedAnswer() {
    }

    /** What the oplog holds for statement 0 of the first command, as far as an answer derives from it. */
    enum Logged { INSERT, UPDATE, DELETE, NONE }

    public static BsonDocument of(String firstCommand, BsonDocument firstReply, String command, BsonDocument request) {
        String first = firstCommand.toLowerCase();
        String now = command.toLowerCase();
        if (first.equals(now)) {
            return firstReply;
        }
        Logged logged = logged(first, firstReply);
        BsonValue upsertedId = upsertedId(first, firstReply);
        switch (now) {
            case "update" -> {
                return switch (logged) {
                    case INSERT -> ok(new BsonDocument("n", new BsonInt32(1)).append("nModified", new BsonInt32(0))
                        .append("upserted", new BsonArray(java.util.List.of(new BsonDocument("index", new BsonInt32(0)).append("_id", upsertedId)))));
                    case UPDATE -> ok(new BsonDocument("n", new BsonInt32(1)).append("nModified", new BsonInt32(1)));
                    case NONE -> ok(new BsonDocument("n", new BsonInt32(0)).append("nModified", new BsonInt32(0)));
                    case DELETE -> throw new ReplicationException(40638, "Location40638",
                        "update retry request is not compatible with previous write in the transaction of type: d");
                };
            }
            case "findandmodify" -> {
                boolean upsert = request.getBoolean("upsert", BsonBoolean.FALSE).getValue();
                return switch (logged) {
                    case INSERT -> {
                        if (!upsert) {
                            throw new ReplicationException(40608, "Location40608",
                                "findAndModify retry request is not compatible with previous write in the transaction of type: i");
                        }
                        yield ok(new BsonDocument("lastErrorObject", new BsonDocument("n", new BsonInt32(1))
                            .append("updatedExisting", BsonBoolean.FALSE).append("upserted", upsertedId)).append("value", BsonNull.VALUE));
                    }
                    case UPDATE -> throw new ReplicationException(request.getBoolean("new", BsonBoolean.FALSE).getValue() ? 40611 : 40612,
                        "Location4061x", "findAndModify retry request: the previous write stored no image of the document");
                    case DELETE -> throw new ReplicationException(40606, "Location40606",
                        "findAndModify retry request is not compatible with previous write in the transaction of type: d");
                    case NONE -> ok(new BsonDocument("lastErrorObject", new BsonDocument("n", new BsonInt32(0))
                        .append("updatedExisting", BsonBoolean.FALSE)).append("value", BsonNull.VALUE));
                };
            }
            case "insert" -> {
                int n = request.isArray("documents") ? request.getArray("documents").size() : 1;
                return ok(new BsonDocument("n", new BsonInt32(n)));
            }
            default -> {
                return firstReply;
            }
        }
    }

    private static Logged logged(String first, BsonDocument reply) {
        if (first.equals("insert")) {
            return Logged.INSERT;
        }
        if (first.equals("delete")) {
            return reply.isNumber("n") && reply.getNumber("n").intValue() > 0 ? Logged.DELETE : Logged.NONE;
        }
        if (first.equals("update")) {
            if (reply.isArray("upserted") && !reply.getArray("upserted").isEmpty()) {
                return Logged.INSERT;
            }
            return reply.isNumber("nModified") && reply.getNumber("nModified").intValue() > 0 ? Logged.UPDATE : Logged.NONE;
        }
        if (first.equals("findandmodify") && reply.isDocument("lastErrorObject")) {
            BsonDocument last = reply.getDocument("lastErrorObject");
            if (last.containsKey("upserted")) {
                return Logged.INSERT;
            }
            if (last.getBoolean("updatedExisting", BsonBoolean.FALSE).getValue()) {
                return Logged.UPDATE;
            }
            return last.isNumber("n") && last.getNumber("n").intValue() > 0 ? Logged.DELETE : Logged.NONE;
        }
        return Logged.NONE;
    }

    private static BsonValue upsertedId(String first, BsonDocument reply) {
        if (first.equals("update") && reply.isArray("upserted") && !reply.getArray("upserted").isEmpty()) {
            return reply.getArray("upserted").get(0).asDocument().get("_id");
        }
        if (first.equals("findandmodify") && reply.isDocument("lastErrorObject")) {
            return reply.getDocument("lastErrorObject").get("upserted", BsonNull.VALUE);
        }
        return BsonNull.VALUE;
    }

    private static BsonDocument ok(BsonDocument reply) {
        return reply.append("ok", new BsonDouble(1));
    }
}
