package io.thermocline.tiering.metadata;

import java.time.Instant;

/**
 * The shared state of one tiered collection. {@code oldestCovered} is the coverage bound: the fast
 * tier holds every document whose age is at or after it ({@code null}: nothing is covered).
 * {@code evictedBelow} is the highest cutoff the evictor ever deleted under: no bound may be lowered
 * past it, because documents older than it may be gone from the fast tier.
 */
public record NamespaceState(
        String namespace,
        Instant oldestCovered,
        Instant evictedBelow,
        WarmerCheckpoint warmer,
        EvictorPass lastEviction,
        long version) {

    public static NamespaceState initial(String namespace) {
        return new NamespaceState(namespace, null, null, null, null, 0);
    }

    public boolean coversNothing() {
        return oldestCovered == null;
    }

    public boolean covers(Instant age) {
        return oldestCovered != null && age != null && !age.isBefore(oldestCovered);
    }

    public NamespaceState withCoverage(Instant bound) {
        return new NamespaceState(namespace, bound, evictedBelow, warmer, lastEviction, version);
    }

    public NamespaceState withEvictedBelow(Instant cutoff) {
        return new NamespaceState(namespace, oldestCovered, cutoff, warmer, lastEviction, version);
    }

    public NamespaceState withWarmer(WarmerCheckpoint checkpoint) {
        return new NamespaceState(namespace, oldestCovered, evictedBelow, checkpoint, lastEviction, version);
    }

    public NamespaceState withLastEviction(EvictorPass pass) {
        return new NamespaceState(namespace, oldestCovered, evictedBelow, warmer, pass, version);
    }
}
