package io.thermocline.embedded.storage;

import java.util.Set;
import org.bson.BsonDocument;

/**
 * The fields of a command that belong to the replica-set layer (sessions, transactions, read and write concern, cluster
 * time, read preference, the stable API, ...): the storage engine never sees them.
 */
public final class LayerFields {
    /** Fields that belong to the replica-set layer and that the backend must not see. */
    private static final Set<String> LAYER_FIELDS = Set.of(
            "lsid",
            "txnNumber",
            "autocommit",
            "startTransaction",
            "$clusterTime",
            "readConcern",
            "writeConcern",
            "$readPreference",
            "apiVersion",
            "apiStrict",
            "apiDeprecationErrors",
            "maxTimeMS",
            "comment",
            "stmtId",
            "stmtIds",
            "$db",
            "let",
            "bypassDocumentValidation",
            "collation",
            "hint",
            "allowDiskUse",
            "maxAwaitTimeMS",
            "recoveryToken");

    private LayerFields() {}

    /** The command without the fields the replica-set layer answers: what the storage engine is given. */
    public static BsonDocument removedFrom(BsonDocument command) {
        BsonDocument copy = new BsonDocument();
        for (var entry : command.entrySet()) {
            if (!LAYER_FIELDS.contains(entry.getKey())) {
                copy.put(entry.getKey(), entry.getValue());
            }
        }
        return copy;
    }
}
