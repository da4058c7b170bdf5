package io.thermocline.proxy.topology;

import io.thermocline.proxy.backend.BackendUnavailableException;
import java.time.Duration;
import java.util.Optional;

/**
 * The one refusal of work that needs a tier out of service: no member answering ({@link TierMonitor#unreachableFor}),
 * or a primary that answers {@code hello} but leaves the serving probe's read unanswered ({@link ServingProbe}). Once
 * that has lasted {@link TierMonitor#OUTAGE_CONFIRMED}, such work is refused at once, not sent, with the retryable
 * {@code HostUnreachable} a driver retries (docs/faults.md): a client thread never waits a paused archive's pause out.
 * Meanwhile a request that waits for the tier's primary waits {@link #OUTAGE_WAIT}, not its full selection timeout.
 */
public final class OutOfService {
    private OutOfService() {}

    /** How long a request waits for a primary of a tier that is down (a check requested meanwhile finds one back). */
    static final Duration OUTAGE_WAIT = Duration.ofSeconds(1);

    /**
     * How long a request waits for a primary: the full {@code timeout}, except once no member has answered for
     * {@link TierMonitor#OUTAGE_CONFIRMED}: then {@link #OUTAGE_WAIT}, so requests needing a tier that is down fail fast and
     * retryably instead of each spending the selection timeout (docs/faults.md).
     */
    static Duration primaryWait(Duration timeout, Optional<Duration> unreachableFor) {
        if (unreachableFor.isPresent()
                && unreachableFor.get().compareTo(TierMonitor.OUTAGE_CONFIRMED) >= 0
                && timeout.compareTo(OUTAGE_WAIT) > 0) {
            return OUTAGE_WAIT;
        }
        return timeout;
    }

    /** The refusal of {@code work} (a command's name) on {@code tier}, out of service this long; empty: send it. */
    public static Optional<BackendUnavailableException> refusal(Tier tier, Optional<Duration> outFor, String work) {
        return refusal(tier, outFor, work, null);
    }

    /** As {@link #refusal(Tier, Optional, String)}, naming each member's state and last error (a refused connection). */
    public static Optional<BackendUnavailableException> refusal(
            Tier tier, Optional<Duration> outFor, String work, TierMonitor members) {
        if (outFor.isEmpty() || outFor.get().compareTo(TierMonitor.OUTAGE_CONFIRMED) < 0) {
            return Optional.empty();
        }
        return Optional.of(new BackendUnavailableException(
                "the " + tier.label()
                        + " tier is unreachable or stalled (no member has answered, or its primary has left"
                        + " a read unanswered, for " + outFor.get().toSeconds() + " s) and this " + work
                        + " needs it: refused at once, not applied; retry later (docs/faults.md)"
                        + (members == null ? "" : "; members: " + members.describeProblems()),
                false));
    }
}
