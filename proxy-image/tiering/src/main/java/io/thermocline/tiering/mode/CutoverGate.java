package io.thermocline.tiering.mode;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ShadowConfig;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.window.Window;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonTimestamp;

/**
 * Whether the shadow evidence allows {@code shadow -> tiered} (MODES contract): every policy namespace
 * warmed (the warmer finished and the coverage bound reaches the window's cutoff), no divergence on any
 * proxy within the quiet period, and enough comparisons since the last one; and ({@link #follower}) an archive
 * follower that can finish the cutover. Empty means allowed; otherwise one sentence naming what to wait for.
 */
public final class CutoverGate {

    private CutoverGate() {
    }

    public static Optional<String> refusal(List<CollectionPolicy> policies, Map<String, NamespaceState> states,
                                           List<ShadowEvidence> evidence, ShadowConfig config, Instant now) {
        for (CollectionPolicy policy : policies) {
            String ns = policy.namespace();
            NamespaceState state = states.getOrDefault(ns, NamespaceState.initial(ns));
            Instant cutoff = new Window(policy).cutoff(now);
            if (state.warmer() == null || !state.warmer().complete() || state.oldestCovered() == null
                    || state.oldestCovered().isAfter(cutoff)) {
                return Optional.of(ns + " is not warmed yet (the fast tier does not cover its whole "
                        + policy.hotWindow() + " window); wait for the warmer to finish, or override");
            }
            List<ShadowEvidence> of = evidence.stream().filter(e -> e.namespace().equals(ns)).toList();
            Optional<Instant> lastDivergence = of.stream().map(ShadowEvidence::lastDivergenceAt)
                    .filter(t -> t != null).max(Instant::compareTo);
            Instant quietFrom = now.minus(config.cutoverQuietPeriod());
            if (lastDivergence.isPresent() && lastDivergence.get().isAfter(quietFrom)) {
                return Optional.of(ns + " diverged at " + lastDivergence.get() + ", within the quiet period of "
                        + config.cutoverQuietPeriod() + "; look at the samples in thermocline status, fix the cause, and wait"
                        + " until " + lastDivergence.get().plus(config.cutoverQuietPeriod()) + ", or override");
            }
            long compared = of.stream().mapToLong(ShadowEvidence::comparedSinceDivergence).sum();
            if (compared < config.minComparisons()) {
                return Optional.of(ns + " has " + compared + " shadow comparisons without divergence, fewer than"
                        + " shadow.minComparisons (" + config.minComparisons() + "); keep shadowing with read traffic, or override");
            }
        }
        return Optional.empty();
    }

    /**
     * Whether the archive follower can take the fleet through {@code CuttingOver} quickly: it must hold a live
     * lease, not be resyncing, and be within {@link Transition#CUTOVER_FOLLOWER_WAIT} of the archive's present
     * ({@code archiveNow}, null when the archive did not answer). Writes on tiered collections are refused until
     * it has applied the archive through the cutover point, so a cutover begun with a stopped or lagging follower
     * would refuse them for as long as it stays behind.
     */
    public static Optional<String> follower(FollowerState follower, BsonTimestamp archiveNow, Instant now) {
        FollowerLease lease = follower.lease();
        if (lease == null || lease.expired(now)) {
            return Optional.of("the archive follower is not running (" + (lease == null ? "no feeder ever held its lease"
                    : "the lease of " + lease.owner() + " expired at " + lease.expiresAt()) + "); start the feeder, which follows"
                    + " the archive in shadow mode, and the cutover goes on once it is in step");
        }
        if (follower.resync() != null && follower.resync().running()) {
            return Optional.of("the archive follower is resyncing since " + follower.resync().startedAt() + " ("
                    + follower.resync().reason() + "); the cutover goes on once it finished");
        }
        if (archiveNow == null) {
            return Optional.of("the archive did not answer, so the archive follower's lag is unknown; the cutover goes on once it answers");
        }
        long behind = follower.appliedThrough() == null ? Long.MAX_VALUE
                : Integer.toUnsignedLong(archiveNow.getTime()) - Integer.toUnsignedLong(follower.appliedThrough().getTime());
        if (behind > Transition.CUTOVER_FOLLOWER_WAIT.toSeconds()) {
            return Optional.of("the archive follower is " + (follower.appliedThrough() == null ? "not yet in step"
                    : behind + " s behind the archive") + ", more than the " + Transition.CUTOVER_FOLLOWER_WAIT.toSeconds()
                    + " s a cutover may wait for it; the cutover goes on once it caught up");
        }
        return Optional.empty();
    }
}
