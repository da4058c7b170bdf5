package io.thermocline.proxy.gateway;

import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.WireLimits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** The tiers the proxy forwards to: the archive always, the fast tier when tiering is on. */
public final class Backends implements AutoCloseable {
    private final TierBackend archive;
    private final TierBackend fast;
    private final Duration primaryWait;
    private volatile WireLimits lastKnownLimits;

    /** {@code fast} may be null (a pass-through proxy). */
    public Backends(TierBackend archive, TierBackend fast, Duration primaryWait) {
        this.archive = archive;
        this.fast = fast;
        this.primaryWait = primaryWait;
    }

    public void start() {
        archive.start();
        if (fast != null) {
            fast.start();
        }
    }

    public TierBackend archive() {
        return archive;
    }

    /** The fast tier, or null for a pass-through proxy. */
    public TierBackend fast() {
        return fast;
    }

    /** The backend of {@code tier}; the archive when there is no fast tier. */
    public TierBackend tier(Tier tier) {
        return tier == Tier.FAST && fast != null ? fast : archive;
    }

    /** How long a request waits for a primary during an election before it fails. */
    public Duration primaryWait() {
        return primaryWait;
    }

    /** The limits to advertise: the lowest of the tiers, waiting for the first hello when none was seen yet. */
    public CompletableFuture<WireLimits> advertisedLimits() {
        Optional<WireLimits> now = currentLimits();
        if (now.isPresent()) {
            lastKnownLimits = now.get();
            return CompletableFuture.completedFuture(now.get());
        }
        if (lastKnownLimits != null) {
            return CompletableFuture.completedFuture(lastKnownLimits);
        }
        CompletableFuture<?> wait = fast == null
                ? archive.monitor().awaitPrimary(primaryWait)
                : CompletableFuture.allOf(
                        archive.monitor().awaitPrimary(primaryWait),
                        fast.monitor().awaitPrimary(primaryWait));
        return wait.thenApply(v -> currentLimits()
                .orElseThrow(() -> new BackendUnavailableException("no backend member reported its limits", false)));
    }

    private Optional<WireLimits> currentLimits() {
        Optional<WireLimits> a = archive.monitor().topology().limits();
        if (fast == null || a.isEmpty()) {
            return a;
        }
        return fast.monitor().topology().limits().map(f -> a.get().intersect(f));
    }

    @Override
    public void close() {
        archive.close();
        if (fast != null) {
            fast.close();
        }
    }
}
