package io.thermocline.tiering.metadata;

import java.util.Objects;
import org.bson.BsonDocument;

/** A transaction as change events name it: the session's {@code lsid} and its {@code txnNumber}. */
public record TransactionId(BsonDocument lsid, long txnNumber) {

    public TransactionId {
        Objects.requireNonNull(lsid, "lsid");
    }

    public BsonDocument toBson() {
        return new BsonDocument("lsid", lsid).append("txnNumber", new org.bson.BsonInt64(txnNumber));
    }

    public static TransactionId fromBson(BsonDocument document) {
        if (document == null || !document.isDocument("lsid")) {
            return null;
        }
        return new TransactionId(document.getDocument("lsid"), document.getNumber("txnNumber").longValue());
    }
}
