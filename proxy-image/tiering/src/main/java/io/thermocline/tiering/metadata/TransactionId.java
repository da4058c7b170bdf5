package io.thermocline.tiering.metadata;

import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;

/** A transaction as change events name it: the session's {@code lsid} and its {@code txnNumber}. */
public record TransactionId(BsonDocument lsid, long txnNumber) {

    public TransactionId {
        Objects.requireNonNull(lsid, "lsid");
    }

    /**
     * Stored with the session id as canonical extended JSON: a UUID (binary subtype 4) can be
     * rewritten by a server or codec that applies a legacy UUID byte order, and a transaction id
     * that changes on the way through storage would no longer match its change events.
     */
    public BsonDocument toBson() {
        return new BsonDocument("session", new BsonString(lsid.toJson()))
                .append("txnNumber", new BsonInt64(txnNumber));
    }

    public static TransactionId fromBson(BsonDocument document) {
        if (document == null || !document.isString("session")) {
            return null;
        }
        return new TransactionId(BsonDocument.parse(document.getString("session").getValue()),
                document.getNumber("txnNumber").longValue());
    }
}
