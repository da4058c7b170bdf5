package io.thermocline.embedded.oplog;

import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * One oplog entry. Data changes carry the document's key and full post-image (so secondaries
 * apply them idempotently), updates also the computed updateDescription; writes made in a
 * session carry its lsid and txnNumber (change events show them only for transactions).
 *
 * @param collection null for database-wide operations (dropDatabase)
 * @param document post-image (insert/update/replace), the command (COMMAND), {to: ns} (RENAME)
 */
public record OplogEntry(OplogPosition position, long term, long wallTimeMillis, Operation operation,
                         String database, String collection, BsonDocument documentKey, BsonDocument document,
                         BsonDocument updateDescription, BsonDocument lsid, Long txnNumber, boolean inTransaction) {

    public String namespace() {
        return collection == null ? database : database + "." + collection;
    }

    public BsonTimestamp clusterTime() {
        return position.clusterTime();
    }

    public OplogEntry at(OplogPosition newPosition, long newTerm) {
        return new OplogEntry(newPosition, newTerm, wallTimeMillis, operation, database, collection, documentKey,
            document, updateDescription, lsid, txnNumber, inTransaction);
    }

    public BsonDocument toBson() {
        BsonDocument bson = new BsonDocument("ts", new BsonTimestamp(position.timestamp()))
            .append("ix", new BsonInt32(position.index()))
            .append("t", new BsonInt64(term))
            .append("wall", new BsonDateTime(wallTimeMillis))
            .append("op", new BsonString(operation.code()))
            .append("db", new BsonString(database));
        if (collection != null) {
            bson.append("coll", new BsonString(collection));
        }
        putIfPresent(bson, "o2", documentKey);
        putIfPresent(bson, "o", document);
        putIfPresent(bson, "ud", updateDescription);
        putIfPresent(bson, "lsid", lsid);
        if (txnNumber != null) {
            bson.append("txnNumber", new BsonInt64(txnNumber));
        }
        if (inTransaction) {
            bson.append("inTxn", BsonBoolean.TRUE);
        }
        return bson;
    }

    public static OplogEntry fromBson(BsonDocument bson) {
        return new OplogEntry(
            new OplogPosition(bson.getTimestamp("ts").getValue(), bson.getInt32("ix").getValue()),
            bson.getInt64("t").getValue(), bson.getDateTime("wall").getValue(),
            Operation.byCode(bson.getString("op").getValue()),
            bson.getString("db").getValue(),
            bson.containsKey("coll") ? bson.getString("coll").getValue() : null,
            docOrNull(bson, "o2"), docOrNull(bson, "o"), docOrNull(bson, "ud"), docOrNull(bson, "lsid"),
            bson.containsKey("txnNumber") ? bson.getInt64("txnNumber").getValue() : null,
            bson.getBoolean("inTxn", BsonBoolean.FALSE).getValue());
    }

    private static void putIfPresent(BsonDocument bson, String key, BsonValue value) {
        if (value != null) {
            bson.append(key, value);
        }
    }

    private static BsonDocument docOrNull(BsonDocument bson, String key) {
        return bson.containsKey(key) ? bson.getDocument(key) : null;
    }
}
