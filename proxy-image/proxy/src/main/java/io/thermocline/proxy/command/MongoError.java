package io.thermocline.proxy.command;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * The MongoDB error codes the proxy produces or acts on, each with the {@code codeName} drivers
 * expect next to it (codes from the server's {@code error_codes.yml}).
 */
public enum MongoError {
    BAD_VALUE(2, "BadValue"),
    HOST_UNREACHABLE(6, "HostUnreachable"),
    FAILED_TO_PARSE(9, "FailedToParse"),
    UNAUTHORIZED(13, "Unauthorized"),
    TYPE_MISMATCH(14, "TypeMismatch"),
    PROTOCOL_ERROR(17, "ProtocolError"),
    AUTHENTICATION_FAILED(18, "AuthenticationFailed"),
    NAMESPACE_NOT_FOUND(26, "NamespaceNotFound"),
    INDEX_NOT_FOUND(27, "IndexNotFound"),
    CURSOR_NOT_FOUND(43, "CursorNotFound"),
    NAMESPACE_EXISTS(48, "NamespaceExists"),
    MAX_TIME_MS_EXPIRED(50, "MaxTimeMSExpired"),
    INVALID_NAMESPACE(73, "InvalidNamespace"),
    SHUTDOWN_IN_PROGRESS(91, "ShutdownInProgress"),
    OPERATION_FAILED(96, "OperationFailed"),
    WRITE_CONFLICT(112, "WriteConflict"),
    COMMAND_NOT_SUPPORTED(115, "CommandNotSupported"),
    FAILED_TO_SATISFY_READ_PREFERENCE(133, "FailedToSatisfyReadPreference"),
    /** What mongod answers when an operation would take more memory than it may (here: a client message past the proxy's budget). */
    EXCEEDED_MEMORY_LIMIT(146, "ExceededMemoryLimit"),
    MAX_STALENESS_OUT_OF_RANGE(160, "MaxStalenessOutOfRange"),
    QUERY_PLAN_KILLED(175, "QueryPlanKilled"),
    PRIMARY_STEPPED_DOWN(189, "PrimarySteppedDown"),
    NO_SUCH_TRANSACTION(251, "NoSuchTransaction"),
    TRANSACTION_TOO_LARGE(257, "TransactionTooLarge"),
    EXCEEDED_TIME_LIMIT(262, "ExceededTimeLimit"),
    OPERATION_NOT_SUPPORTED_IN_TRANSACTION(263, "OperationNotSupportedInTransaction"),
    UNSUPPORTED_OP_QUERY_COMMAND(352, "UnsupportedOpQueryCommand"),
    NOT_WRITABLE_PRIMARY(10107, "NotWritablePrimary"),
    INTERRUPTED_AT_SHUTDOWN(11600, "InterruptedAtShutdown"),
    INTERRUPTED_DUE_TO_REPL_STATE_CHANGE(11602, "InterruptedDueToReplStateChange"),
    NOT_PRIMARY_NO_SECONDARY_OK(13435, "NotPrimaryNoSecondaryOk"),
    NOT_PRIMARY_OR_SECONDARY(13436, "NotPrimaryOrSecondary"),
    /** A required field is missing (mongod's IDL parser). */
    MISSING_FIELD(40414, "Location40414"),
    /** A field a strict command parser does not know (mongod's IDL parser). */
    UNKNOWN_FIELD(40415, "Location40415"),
    /** getMore in a session on a cursor opened outside one (mongod's validateLSID). */
    GETMORE_IN_SESSION_ON_SESSIONLESS_CURSOR(50736, "Location50736"),
    /** getMore without an lsid on a cursor opened in a session. */
    GETMORE_WITHOUT_LSID(50737, "Location50737"),
    /** getMore in another session than the cursor's. */
    GETMORE_IN_OTHER_SESSION(50738, "Location50738");

    /** Errors that mean the member changed role (the SDAM spec's "state change errors"): its tier must be checked again. */
    private static final Set<MongoError> STATE_CHANGE = EnumSet.of(
            SHUTDOWN_IN_PROGRESS,
            PRIMARY_STEPPED_DOWN,
            NOT_WRITABLE_PRIMARY,
            INTERRUPTED_AT_SHUTDOWN,
            INTERRUPTED_DUE_TO_REPL_STATE_CHANGE,
            NOT_PRIMARY_NO_SECONDARY_OK,
            NOT_PRIMARY_OR_SECONDARY);

    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private final int code;
    private final String codeName;

    MongoError(int code, String codeName) {
        this.code = code;
        this.codeName = codeName;
    }

    public int code() {
        return code;
    }

    public String codeName() {
        return codeName;
    }

    /** Whether a server's {@code code} is this error. */
    public boolean is(int serverCode) {
        return serverCode == code;
    }

    /** The state change error with this code (a member stepped down, is shutting down or recovering), if it is one. */
    public static java.util.Optional<MongoError> stateChange(int serverCode) {
        return STATE_CHANGE.stream().filter(e -> e.code == serverCode).findFirst();
    }

    public static boolean isStateChange(int serverCode) {
        for (MongoError e : STATE_CHANGE) {
            if (e.code == serverCode) {
                return true;
            }
        }
        return false;
    }

    /** The error document a server sends: {@code ok: 0, errmsg, code, codeName} and the labels drivers act on. */
    public RawBsonDocument reply(String message, List<String> labels) {
        BsonDocument d = new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString(message))
                .append("code", new BsonInt32(code))
                .append("codeName", new BsonString(codeName));
        if (!labels.isEmpty()) {
            BsonArray a = new BsonArray();
            labels.forEach(l -> a.add(new BsonString(l)));
            d.append("errorLabels", a);
        }
        return new RawBsonDocument(d, CODEC);
    }

    public RawBsonDocument reply(String message) {
        return reply(message, List.of());
    }
}
