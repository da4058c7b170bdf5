package io.thermocline.proxy.causal;

import java.time.Duration;
import org.bson.BsonTimestamp;

/**
 * The archive did not catch up with a read's causal point within {@code proxy.causalWaitTimeout}
 * (or the fast tier could not be asked for its present): the client gets a retryable error instead of
 * data that may miss acknowledged writes.
 */
public final class CausalWaitTimeout extends RuntimeException {

    // a dead letter (a write the archive refused for good) holds the feeder's mirrored-through until it is resolved
    private static final String ADVICE = " Retry the operation; if this persists, check the feeder"
            + " (thermocline_feeder_lag_seconds, and thermocline_feeder_dead_letters: a write the archive refused"
            + " holds it until resolved, see thermocline.deadLetters) or raise proxy.causalWaitTimeout";

    public CausalWaitTimeout(String command, BsonTimestamp causalPoint, Duration timeout) {
        super("the archive has not yet received this session's latest fast-tier writes (causal point "
                + describe(causalPoint)
                + ") after waiting " + timeout.toMillis() + " ms for the feeder; " + command
                + " was not run to avoid returning stale data." + ADVICE);
    }

    private CausalWaitTimeout(String message) {
        super(message);
    }

    /** proxy.readConsistency linearizable: the writes acknowledged before the read are not all in the archive yet. */
    public static CausalWaitTimeout linearizable(String command, BsonTimestamp causalPoint, Duration timeout) {
        return new CausalWaitTimeout(
                "the archive has not yet received every write the fast tier acknowledged before this "
                        + command + " arrived (causal point " + describe(causalPoint)
                        + ", proxy.readConsistency linearizable) after"
                        + " waiting " + timeout.toMillis() + " ms for the feeder; " + command
                        + " was not run to avoid returning"
                        + " stale data." + ADVICE);
    }

    /** The fast tier did not answer the probe that fixes a read's causal point. */
    public static CausalWaitTimeout probeFailed(String command, Duration timeout, Throwable cause) {
        return new CausalWaitTimeout(
                "the fast tier did not answer the probe that fixes the causal point of this " + command
                        + " within " + timeout.toMillis() + " ms (" + (cause == null ? "no answer" : cause.toString())
                        + "); " + command
                        + " was not run to avoid returning stale data." + ADVICE);
    }

    /** The fast tier's majority did not reach what a read of its primary saw (the fences of removals it saw). */
    public static CausalWaitTimeout notMajorityCommitted(String command, BsonTimestamp seen, Duration timeout) {
        return new CausalWaitTimeout(
                "the fast tier's majority has not applied, after " + timeout.toMillis() + " ms, the writes its"
                        + " primary showed this " + command + " (through " + describe(seen) + "); " + command
                        + " was not answered from"
                        + " the archive to avoid returning stale data. Retry the operation; if this persists, check the fast tier's"
                        + " replication (rs.status()) or raise proxy.causalWaitTimeout");
    }

    private static String describe(BsonTimestamp t) {
        return t.getTime() + "." + t.getInc();
    }
}
