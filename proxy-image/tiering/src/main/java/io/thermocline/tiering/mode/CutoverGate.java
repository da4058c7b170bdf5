package io.thermocline.tiering.mode;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ShadowConfig;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.window.Window;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Whether the shadow evidence allows {@code shadow -> tiered} (MODES contract): every policy namespace
 * warmed (the warmer finished and the coverage bound reaches the window's cutoff), no divergence on any
 * proxy within the quiet period, and enough comparisons since the last one. Empty means allowed;
 * otherwise one sentence naming the namespace and what to wait for.
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
}
