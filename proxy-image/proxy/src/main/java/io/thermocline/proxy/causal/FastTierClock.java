package io.thermocline.proxy.causal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;

/**
 * The fast tier's present, for reads that must see every write acknowledged before they arrived. A
 * probe (a write on the fast-tier primary) returns a cluster time later than every write committed
 * before the probe was issued. Probes are shared: one runs at a time, and every caller that arrives
 * while it runs waits for the next one, which starts when it ends. A caller never gets the answer of
 * a probe that started before it arrived: that probe may have been ordered before a write the caller
 * was told about. So a caller waits at most two probe round trips, and the fast tier sees at most one
 * probe per round trip whatever the number of readers.
 */
public final class FastTierClock {

    private final Supplier<BsonTimestamp> probe;
    private final Executor executor;
    private CompletableFuture<BsonTimestamp> running;
    private CompletableFuture<BsonTimestamp> next;

    /** {@code probe} blocks until the fast tier acknowledged a probe write and returns its cluster time. */
    public FastTierClock(Supplier<BsonTimestamp> probe, Executor executor) {
        this.probe = probe;
        this.executor = executor;
    }

    /** A fast-tier cluster time at or after every write acknowledged before this call. */
    public CompletableFuture<BsonTimestamp> now() {
        CompletableFuture<BsonTimestamp> mine;
        synchronized (this) {
            if (running != null) {
                if (next == null) {
                    next = new CompletableFuture<>();
                }
                return next;
            }
            running = mine = new CompletableFuture<>();
        }
        launch(mine);
        return mine;
    }

    private void launch(CompletableFuture<BsonTimestamp> target) {
        CompletableFuture.supplyAsync(probe, executor).whenComplete((time, error) -> {
            CompletableFuture<BsonTimestamp> following;
            synchronized (this) {
                following = next;
                next = null;
                running = following;
            }
            if (following != null) {
                launch(following);
            }
            if (error != null) {
                target.completeExceptionally(error);
            } else {
                target.complete(time);
            }
        });
    }
}
