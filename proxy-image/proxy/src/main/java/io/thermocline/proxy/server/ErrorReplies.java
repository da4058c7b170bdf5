package io.thermocline.proxy.server;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

import java.util.List;

/** MongoDB error documents the proxy itself produces, with the codes and labels drivers act on. */
public final class ErrorReplies {
    public static final int HOST_UNREACHABLE = 6;
    public static final int PROTOCOL_ERROR = 17;
    public static final int CURSOR_NOT_FOUND = 43;
    public static final int SHUTDOWN_IN_PROGRESS = 91;
    public static final int OPERATION_FAILED = 96;
    public static final int COMMAND_NOT_SUPPORTED = 115;
    public static final int UNSUPPORTED_OP_QUERY_COMMAND = 352;

    private ErrorReplies() {
    }

    public static BsonDocument error(int code, String codeName, String message, List<String> labels) {
        BsonDocument d = new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString(message))
                .append("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName));
        if (!labels.isEmpty()) {
            BsonArray a = new BsonArray();
            labels.forEach(l -> a.add(new BsonString(l)));
            d.append("errorLabels", a);
        }
        return d;
    }

    /**
     * A backend that cannot be reached right now. Labels follow the retryable-writes and
     * transactions specifications: a retryable write may be retried, a statement inside a
     * transaction makes the whole transaction retryable, and a commit whose request may have
     * reached the backend has an unknown result.
     */
    public static BsonDocument backendUnavailable(String message, CommandTraits command, boolean requestSent) {
        List<String> labels;
        if (command.name().equals("commitTransaction")) {
            labels = requestSent ? List.of("RetryableWriteError", "UnknownTransactionCommitResult") : List.of("RetryableWriteError");
        } else if (command.name().equals("abortTransaction")) {
            labels = List.of("RetryableWriteError");
        } else if (command.inTransaction()) {
            labels = List.of("TransientTransactionError");
        } else if (command.retryableWrite()) {
            labels = List.of("RetryableWriteError");
        } else {
            labels = List.of();
        }
        return error(HOST_UNREACHABLE, "HostUnreachable", message, labels);
    }
}
