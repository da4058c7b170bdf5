package io.thermocline.proxy.gateway;

import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.pool.PoolTimeoutException;
import io.thermocline.proxy.topology.InvalidReadPreference;
import io.thermocline.proxy.topology.UnsatisfiableReadPreference;
import io.thermocline.wire.OpMsg;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A request the proxy could not forward gets the error a driver acts on: the code, and the labels
 * of the retryable-writes and transactions specifications, so the driver retries what it may.
 */
public final class ErrorMapping {
    private static final Logger LOG = LoggerFactory.getLogger(ErrorMapping.class);

    private final ClientReplies replies;
    /** Names the tier a driver error is about, from the members it lists ("the archive", "the fast", else "a"). */
    private final java.util.function.Function<String, String> tierNamed;

    public ErrorMapping(ClientReplies replies) {
        this(replies, message -> "a");
    }

    public ErrorMapping(ClientReplies replies, java.util.function.Function<String, String> tierNamed) {
        this.replies = replies;
        this.tierNamed = tierNamed;
    }

    /** The tier whose members {@code message} names, for errors of the tiered layer's own driver clients. */
    public static java.util.function.Function<String, String> tierNamedBy(Backends backends) {
        return message -> {
            if (message != null && names(message, backends.archive())) {
                return "the archive";
            }
            return message != null && backends.fast() != null && names(message, backends.fast()) ? "the fast" : "a";
        };
    }

    private static boolean names(String message, TierBackend tier) {
        return tier.monitor().topology().members().keySet().stream()
                .anyMatch(a -> message.contains(a.getHost() + ":" + a.getPort()));
    }

    public CompletableFuture<Void> unavailable(Request request, Throwable error) {
        Throwable cause = Forwarder.unwrap(error);
        long elapsed = System.nanoTime() - request.startNanos();
        if (!request.client().isOpen() || cause instanceof ClosedChannelException) {
            // The client went away while its request was in flight: nobody to answer.
            replies.metrics().commandFinished(request.name(), "client_gone", elapsed);
            return CompletableFuture.completedFuture(null);
        }
        RawBsonDocument reply = reply(request.traits(), cause, tierNamed);
        replies.metrics().commandFinished(request.name(), "unavailable", elapsed);
        if (request.msg().moreToCome()) {
            return CompletableFuture.completedFuture(null);
        }
        return request.client().send(OpMsg.reply(request.msg().requestId(), reply), request.compressor());
    }

    /** The error for a command that failed on its way to a member with {@code cause}. */
    static RawBsonDocument reply(CommandTraits command, Throwable cause) {
        return reply(command, cause, message -> "a");
    }

    static RawBsonDocument reply(
            CommandTraits command, Throwable cause, java.util.function.Function<String, String> tierNamed) {
        if (cause instanceof BackendUnavailableException b) {
            return MongoError.HOST_UNREACHABLE.reply(
                    b.getMessage(), backendUnavailableLabels(command, b.requestSent()));
        }
        if (cause instanceof InvalidReadPreference invalid) {
            return (invalid.kind() == InvalidReadPreference.Kind.MAX_STALENESS_OUT_OF_RANGE
                            ? MongoError.MAX_STALENESS_OUT_OF_RANGE
                            : MongoError.BAD_VALUE)
                    .reply(invalid.getMessage(), List.of());
        }
        if (cause instanceof UnsatisfiableReadPreference unsatisfiable) {
            return MongoError.FAILED_TO_SATISFY_READ_PREFERENCE.reply(unsatisfiable.getMessage(), List.of());
        }
        if (cause instanceof com.mongodb.MongoTimeoutException
                || cause instanceof com.mongodb.MongoSocketException
                || cause instanceof com.mongodb.MongoConnectionPoolClearedException) {
            // the tiered layer's own request to a tier found no member answering (an outage; a pool the driver
            // cleared after another request's network error is the same outage, retryable by the CMAP spec):
            // retryable, as for a forward
            return MongoError.HOST_UNREACHABLE.reply(
                    tierNamed.apply(cause.getMessage()) + " tier did not answer the Thermocline proxy's "
                            + command.name() + " (retry later): " + cause.getMessage(),
                    backendUnavailableLabels(command, cause instanceof com.mongodb.MongoSocketException));
        }
        if (cause instanceof com.mongodb.MongoServerException server
                && MongoError.stateChange(server.getCode()).isPresent()) {
            // the tiered layer's own request met a member that stopped being primary (a failover): the client's
            // driver retries on the new primary, as it would against the replica set, given the same code and labels
            return MongoError.stateChange(server.getCode())
                    .get()
                    .reply(
                            tierNamed.apply(cause.getMessage()) + " tier changed primary"
                                    + " while the Thermocline proxy ran " + command.name() + " (retry): "
                                    + server.getMessage(),
                            backendUnavailableLabels(command, true));
        }
        if (cause instanceof com.mongodb.MongoExecutionTimeoutException timeout) {
            if (command.clientTimeLimit()) {
                // the client's own maxTimeMS ran out at the tier (the tiered layer sends its statements on): mongod's
                // answer, which no driver retries
                return MongoError.MAX_TIME_MS_EXPIRED.reply(timeout.getMessage(), List.of());
            }
            // a tier did not finish the tiered layer's own request (a fence read, a lookup) within a limit of its
            // own; the client set none, so this is no MaxTimeMSExpired of its own: retryable, as a lagging tier is
            // (TierLagging), never an OperationFailed
            return MongoError.EXCEEDED_TIME_LIMIT.reply(
                    tierNamed.apply(timeout.getMessage()) + " tier did not finish the Thermocline proxy's part of "
                            + command.name() + " in time (retry): " + timeout.getMessage(),
                    backendUnavailableLabels(command, true));
        }
        if (cause instanceof PoolTimeoutException t) {
            return MongoError.HOST_UNREACHABLE.reply(
                    t.getMessage(),
                    command.inTransaction() && !command.endsTransaction()
                            ? List.of("TransientTransactionError")
                            : List.of());
        }
        if (cause instanceof io.thermocline.tiering.provenance.Fence.UnreadableFence unreadable) {
            // fail closed with what the operator can act on, not the exception's class
            LOG.error("event=fence_unreadable command={} error=\"{}\"", command.name(), unreadable.getMessage());
            return MongoError.OPERATION_FAILED.reply(
                    command.name() + " refused by the Thermocline proxy: " + unreadable.getMessage());
        }
        LOG.warn("event=proxy_error command={} error=\"{}\"", command.name(), cause.toString(), cause);
        return MongoError.OPERATION_FAILED.reply(
                "the Thermocline proxy failed to forward " + command.name() + ": " + cause);
    }

    /**
     * A backend that cannot be reached right now. Labels follow the retryable-writes and
     * transactions specifications: a retryable write may be retried, a statement inside a
     * transaction makes the whole transaction retryable, and a commit whose request may have
     * reached the backend has an unknown result.
     */
    static List<String> backendUnavailableLabels(CommandTraits command, boolean requestSent) {
        if (command.name().equals("commitTransaction")) {
            return requestSent
                    ? List.of("RetryableWriteError", "UnknownTransactionCommitResult")
                    : List.of("RetryableWriteError");
        }
        if (command.name().equals("abortTransaction")) {
            return List.of("RetryableWriteError");
        }
        if (command.inTransaction()) {
            return List.of("TransientTransactionError");
        }
        return command.retryableWrite() ? List.of("RetryableWriteError") : List.of();
    }
}
