package io.thermocline.embedded.member;

import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;

/** The labels and codes drivers act on: which errors are transient in a transaction, retryable, or a state change. */
final class ErrorLabels {
    private static final Set<Integer> RETRYABLE_CODES =
            Set.of(6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436);
    private static final Set<Integer> STATE_CHANGE_CODES = Set.of(91, 189, 10107, 11600, 11602, 13435, 13436);

    private ErrorLabels() {}

    /** An error after which drivers re-check the server: its reply carries the member's topologyVersion. */
    static boolean isStateChange(int code) {
        return STATE_CHANGE_CODES.contains(code);
    }

    /** The error labels of an error with this code in reply to this command. */
    static BsonArray of(int code, String name, BsonDocument command) {
        BsonArray labels = new BsonArray();
        boolean inTransaction = command.containsKey("autocommit");
        String lower = name.toLowerCase();
        boolean txnEnd = lower.equals("committransaction") || lower.equals("aborttransaction");
        if (inTransaction && !txnEnd && (code == 251 || code == 112 || code == 24 || RETRYABLE_CODES.contains(code))) {
            labels.add(new BsonString("TransientTransactionError"));
        } else if (command.containsKey("txnNumber") && RETRYABLE_CODES.contains(code)) {
            labels.add(new BsonString("RetryableWriteError"));
        }
        if (lower.equals("committransaction") && code == 251) {
            labels.add(new BsonString("TransientTransactionError"));
        }
        return labels;
    }
}
