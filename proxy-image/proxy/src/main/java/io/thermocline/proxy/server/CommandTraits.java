package io.thermocline.proxy.server;

import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.util.Set;

/**
 * What the proxy needs to know about a client command to route it and to label its errors.
 *
 * @param txnNumber       the command's txnNumber, or null
 * @param inTransaction   part of a multi-statement transaction ({@code autocommit: false})
 */
public record CommandTraits(String name, Long txnNumber, boolean inTransaction, boolean startsTransaction) {
    private static final Set<String> RETRYABLE_WRITES = Set.of("insert", "update", "delete", "findAndModify", "bulkWrite");

    public static CommandTraits of(String name, BsonDocument body) {
        BsonValue txn = body.get("txnNumber");
        Long txnNumber = txn != null && txn.isNumber() ? txn.asNumber().longValue() : null;
        BsonValue autocommit = body.get("autocommit");
        boolean inTxn = txnNumber != null && autocommit != null && autocommit.isBoolean() && !autocommit.asBoolean().getValue();
        BsonValue start = body.get("startTransaction");
        boolean starts = inTxn && start != null && start.isBoolean() && start.asBoolean().getValue();
        return new CommandTraits(name, txnNumber, inTxn, starts);
    }

    public boolean retryableWrite() {
        return txnNumber != null && !inTransaction && RETRYABLE_WRITES.contains(name);
    }

    public boolean endsTransaction() {
        return name.equals("commitTransaction") || name.equals("abortTransaction");
    }
}
