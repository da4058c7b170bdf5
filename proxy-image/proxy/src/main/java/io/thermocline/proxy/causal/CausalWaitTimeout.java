package io.thermocline.proxy.causal;

import org.bson.BsonTimestamp;

/**
 * The archive did not catch up with a client's causal point within {@code proxy.causalWaitTimeout}:
 * the client gets a retryable error instead of data that may miss its own writes.
 */
public final class CausalWaitTimeout extends RuntimeException {

    public CausalWaitTimeout(String command, BsonTimestamp causalPoint, java.time.Duration timeout) {
        super("the archive has not yet received this session's latest fast-tier writes (causal point "
                + causalPoint.getTime() + "." + causalPoint.getInc() + ") after waiting " + timeout.toMillis()
                + " ms for the feeder; " + command + " was not run to avoid returning stale data. Retry the operation;"
                + " if this persists, check the feeder (thermocline_feeder_lag_seconds) or raise proxy.causalWaitTimeout");
    }
}
