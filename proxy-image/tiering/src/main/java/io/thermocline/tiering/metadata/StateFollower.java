package io.thermocline.tiering.metadata;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a proxy (or a worker) follows the shared state: it re-reads {@code thermocline.state} twice
 * every {@code interval}. Polling rather than a change stream keeps it correct through failovers and
 * resume-token loss; the evictor waits {@link #propagationDelay(Duration)} after raising a bound
 * before deleting, so every follower has seen the raised bound first.
 */
public final class StateFollower implements StateFreshness, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(StateFollower.class);

    private final MetadataStore store;
    private final ScheduledExecutorService timer;
    private final List<Consumer<TieringSnapshot>> listeners = new CopyOnWriteArrayList<>();
    private final long propagationNanos;
    private volatile TieringSnapshot current;
    private volatile boolean everRead;
    private volatile long readStartedNanos;
    private volatile long unbrokenSinceNanos;

    public StateFollower(MetadataStore store, Duration interval) {
        this.store = store;
        this.propagationNanos = propagationDelay(interval).toNanos();
        this.current = new TieringSnapshot(Map.of(), FeederCheckpoint.initial(), Instant.EPOCH);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "thermocline-state-follower");
            thread.setDaemon(true);
            return thread;
        });
        // twice per interval: one slow read then leaves 1.5 intervals before the view counts as stale
        timer.scheduleWithFixedDelay(this::refresh, 0, Math.max(1, interval.toMillis() / 2), TimeUnit.MILLISECONDS);
    }

    /** How long a writer must wait after changing a bound before it may rely on followers having seen it. */
    public static Duration propagationDelay(Duration interval) {
        return interval.multipliedBy(2);
    }

    public TieringSnapshot current() {
        return current;
    }

    public void onChange(Consumer<TieringSnapshot> listener) {
        listeners.add(listener);
    }

    /**
     * True while the last successful read started less than the propagation delay ago: every bound an
     * evictor raised before that read is known, and no evictor deletes under a bound raised after it
     * before the delay has passed. Past it, a follower cannot prove its bounds current (fail closed).
     */
    @Override
    public boolean fresh(long nowNanos) {
        return everRead && nowNanos - readStartedNanos < propagationNanos;
    }

    /** When the last successful read started ({@link System#nanoTime()}); meaningful once {@link #fresh} was true. */
    @Override
    public long readStartedNanos() {
        return readStartedNanos;
    }

    /**
     * The start of the first read of the current run of successful reads each begun less than the
     * propagation delay after the one before: no raised bound can have come and gone unseen since.
     */
    @Override
    public long unbrokenSinceNanos() {
        return unbrokenSinceNanos;
    }

    /** Reads the state now (also what the timer does). */
    public synchronized TieringSnapshot refresh() {
        long started = System.nanoTime();
        try {
            TieringSnapshot next = new TieringSnapshot(store.namespaces(), store.feederCheckpoint(), Instant.now());
            TieringSnapshot previous = current;
            current = next;
            if (!next.namespaces().equals(previous.namespaces()) || !next.feeder().equals(previous.feeder())) {
                listeners.forEach(listener -> listener.accept(next));
            }
            // published after the listeners ran: a reader pairing this time with a table sees that table or a newer one
            if (!everRead || started - readStartedNanos >= propagationNanos) {
                unbrokenSinceNanos = started;
            }
            readStartedNanos = started;
            everRead = true;
            return next;
        } catch (RuntimeException e) {
            LOG.warn("event=state_refresh_failed error={}", e.toString());
            return current;
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
