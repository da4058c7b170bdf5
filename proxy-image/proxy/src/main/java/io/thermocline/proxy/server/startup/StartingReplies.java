package io.thermocline.proxy.server.startup;

import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.command.MongoError;
import java.util.List;
import org.bson.BsonDocument;

/**
 * What a client is answered while the proxy's port is open and what serves it is not ready yet: the answers of a
 * mongod that is starting up or recovering, {@code NotPrimaryOrSecondary} (13436), one of the SDAM specification's
 * state change errors, with the labels mongod puts on it.
 *
 * <p>hello fails too ({@code ok: 0}): a driver then keeps the server Unknown and its server selection waits, checking
 * again every half second, whatever its topology type. A hello that succeeded without being writable would not do:
 * with a single seed the Java driver connects in topology Single, where any server that is not Unknown is selected
 * (server selection specification, "Topology type: Single"), and its commands would fail past the one retry.
 */
public final class StartingReplies {

    private StartingReplies() {}

    /** The answer to hello or isMaster: an error, so the driver's monitor keeps this server Unknown. */
    public static BsonDocument hello(String stage) {
        return MongoError.NOT_PRIMARY_OR_SECONDARY.reply(message(stage));
    }

    /** The answer to any other command, labelled as mongod labels a state change error for that command. */
    public static BsonDocument command(CommandTraits command, String stage) {
        return MongoError.NOT_PRIMARY_OR_SECONDARY.reply(message(stage), labels(command));
    }

    /**
     * The labels mongod adds to NotPrimaryOrSecondary: a retryable write and a commit or abort may be retried
     * (retryable writes specification), a statement of a transaction makes the transaction retryable
     * (transactions specification); nothing ran, so a commit's result is known.
     */
    static List<String> labels(CommandTraits command) {
        if (command.endsTransaction()) {
            return List.of("RetryableWriteError");
        }
        if (command.inTransaction()) {
            return List.of("TransientTransactionError");
        }
        return command.retryableWrite() ? List.of("RetryableWriteError") : List.of();
    }

    private static String message(String stage) {
        return "Thermocline is starting (" + stage + "): it answers once its tiers are up; drivers wait for it";
    }
}
