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
    private final boolean callerRuns;
    private CompletableFuture<BsonTimestamp> running;
    private CompletableFuture<BsonTimestamp> next;

    /** {@code probe} blocks until the fast tier acknowledged a probe write and returns its cluster time. */
    public FastTierClock(Supplier<BsonTimestamp> probe, Executor executor) {
        this(probe, executor, false);
    }

    private FastTierClock(Supplier<BsonTimestamp> probe, Executor executor, boolean callerRuns) {
        this.probe = probe;
        this.executor = executor;
        this.callerRuns = callerRuns;
    }

    /**
     * As the constructor, but a caller that finds no probe running runs it in its own thread ({@link #now} returns
     * once it is done): one thread hand-off less per read on a busy machine. Callers arriving meanwhile share the
     * next, run on {@code executor}.
     */
    public static FastTierClock runByCaller(Supplier<BsonTimestamp> probe, Executor executor) {
        return new FastTierClock(probe, executor, true);
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
        if (callerRuns) {
            run(mine);
        } else {
            executor.execute(() -> run(mine));
        }
        return mine;
    }

    private void run(CompletableFuture<BsonTimestamp> target) {
        BsonTimestamp time = null;
        Throwable error = null;
        try {
            time = probe.get();
        } catch (RuntimeException | Error e) {
            error = e;
        }
        CompletableFuture<BsonTimestamp> following;
        synchronized (this) {
            following = next;
            next = null;
            running = following;
        }
        if (following != null) {
            executor.execute(() -> run(following));
        }
        if (error != null) {
            target.completeExceptionally(error);
        } else {
            target.complete(time);
        }
    }
}
