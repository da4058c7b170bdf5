package io.thermocline.proxy.topology;

import java.util.Optional;

/**
 * Protocol limits a backend advertises in hello; the proxy advertises the lowest of its tiers
 * so that a client never sends something one tier would refuse.
 */
public record WireLimits(int minWireVersion, int maxWireVersion, int maxBsonObjectSize,
                         int maxMessageSizeBytes, int maxWriteBatchSize,
                         Integer logicalSessionTimeoutMinutes) {

    public Optional<Integer> sessionTimeoutMinutes() {
        return Optional.ofNullable(logicalSessionTimeoutMinutes);
    }

    /** The limits that satisfy both: narrower wire range, smaller sizes, shorter session timeout. */
    public WireLimits intersect(WireLimits other) {
        if (other == null) {
            return this;
        }
        Integer sessions = logicalSessionTimeoutMinutes == null || other.logicalSessionTimeoutMinutes == null
                ? null : Math.min(logicalSessionTimeoutMinutes, other.logicalSessionTimeoutMinutes);
        return new WireLimits(Math.max(minWireVersion, other.minWireVersion),
                Math.min(maxWireVersion, other.maxWireVersion),
                Math.min(maxBsonObjectSize, other.maxBsonObjectSize),
                Math.min(maxMessageSizeBytes, other.maxMessageSizeBytes),
                Math.min(maxWriteBatchSize, other.maxWriteBatchSize), sessions);
    }
}
