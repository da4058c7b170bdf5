package io.thermocline.proxy.mode;

import io.thermocline.config.Mode;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This proxy's side of the fleet-wide mode protocol: it follows the mode document, and acknowledges
 * an epoch only once no request it began under an older epoch is still running, so the controller
 * knows that from then on no replica acts on the old mode. Every request holds a {@link Ticket} with
 * the view it was routed by. A proxy whose view is older than the lease (it could not read the mode
 * document) fails closed: tiered commands get a retryable error until it reads the document again.
 */
public final class ModeGate implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ModeGate.class);

    /** The mode document as this proxy last read it. */
    public record View(ModeDocument document, long readAtNanos) {}

    /** One request's hold on the view it was routed by. */
    public final class Ticket implements AutoCloseable {
        private final View view;
        private final boolean stale;
        private boolean closed;
        private volatile java.util.function.Consumer<org.bson.RawBsonDocument> archiveReply;

        private final boolean fleetBehind;

        private Ticket(View view, boolean stale, boolean fleetBehind) {
            this.view = view;
            this.stale = stale;
            this.fleetBehind = fleetBehind;
        }

        /**
         * Some live proxy may still act on the previous phase: its reads may go where this phase's writes do not
         * (a replica still cutting over reads the archive without the read barrier, one still draining reads the
         * fast tier), so this phase's writes wait until every live proxy acknowledged it.
         */
        public boolean fleetBehind() {
            return fleetBehind;
        }

        /** The phase this request is routed by (tiered when the cluster never used modes). */
        public Phase phase() {
            return view.document().phase();
        }

        /** The epoch of the mode document this request is routed by. */
        public long epoch() {
            return view.document().epoch();
        }

        /** The proxy could not read the mode document within the lease: refuse, retryably. */
        public boolean stale() {
            return stale;
        }

        /** A shadowed read: what to do with the archive's reply once it arrived (the client has it already). */
        public void onArchiveReply(java.util.function.Consumer<org.bson.RawBsonDocument> observer) {
            this.archiveReply = observer;
        }

        /** Called by the pass-through path with the archive's reply. */
        public void archiveReplied(org.bson.RawBsonDocument reply) {
            java.util.function.Consumer<org.bson.RawBsonDocument> observer = archiveReply;
            if (observer != null) {
                try {
                    observer.accept(reply);
                } catch (RuntimeException e) {
                    LOG.warn("event=shadow_sample_failed error={}", e.toString()); // never the client's problem
                }
            }
        }

        @Override
        public void close() {
            synchronized (ModeGate.this) {
                if (!closed) {
                    closed = true;
                    inFlight.merge(view.document().epoch(), -1, Integer::sum);
                    inFlight.remove(view.document().epoch(), 0);
                }
            }
        }
    }

    private final ModeStore store;
    private final String instance;
    private final Duration interval;
    private final Duration lease;
    private final Mode configRequest;
    private final ScheduledExecutorService follower;
    private final Map<Long, Integer> inFlight = new HashMap<>();
    private volatile View view = new View(ModeDocument.initial(), System.nanoTime());
    private volatile long ackedEpoch = -1;
    /** The newest epoch every live proxy has acknowledged, as this proxy last saw the acknowledgements. */
    private volatile long fleetOnEpoch = -1;

    private long lastAckNanos;
    /** When this proxy last acknowledged a hold for a restore (System.nanoTime), valid once {@link #restoringAcked}. */
    private volatile long restoringAckedNanos;

    private volatile boolean restoringAcked;
    private boolean requested;

    /** {@code configRequest}: the config's {@code mode}, written as a request at start (null: none). */
    public ModeGate(ModeStore store, String instance, Duration interval, Duration lease, Mode configRequest) {
        this.store = store;
        this.instance = instance;
        this.interval = interval;
        this.lease = lease;
        this.configRequest = configRequest;
        this.follower = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "thermocline-mode-follower");
            t.setDaemon(true);
            return t;
        });
    }

    public ModeGate start() {
        follower.scheduleWithFixedDelay(this::poll, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    public View view() {
        return view;
    }

    public Duration lease() {
        return lease;
    }

    /** Enters a request under the current view; close the ticket when its reply is sent. */
    public synchronized Ticket enter() {
        View v = view;
        boolean stale = v.document().exists() && System.nanoTime() - v.readAtNanos() > lease.toNanos();
        inFlight.merge(v.document().epoch(), 1, Integer::sum);
        return new Ticket(v, stale, fleetBehind(v));
    }

    /** Reads the document, then acknowledges it when nothing older is in flight; runs on the follower thread. */
    void poll() {
        try {
            if (!requested && configRequest != null) {
                store.requestFromConfig(configRequest);
                requested = true;
            }
            ModeDocument d = store.read();
            ModeDocument before = view.document();
            synchronized (this) {
                view = new View(d, System.nanoTime());
            }
            if (d.epoch() != before.epoch() || d.phase() != before.phase()) {
                LOG.info(
                        "event=mode_seen instance={} active={} phase={} epoch={}",
                        instance,
                        d.active().configName(),
                        d.phase().documentName(),
                        d.epoch());
            }
            acknowledge(d.epoch());
            if (d.phase() == Phase.RESTORING && ackedEpoch == d.epoch()) {
                // acknowledged: every request begun before the hold has been answered, its cursors registered by now
                restoringAckedNanos = System.nanoTime();
                restoringAcked = true;
            }
            if (d.exists()
                    && fleetOnEpoch < d.epoch()
                    && ackedEpoch == d.epoch()
                    && store.fleetAcked(d.epoch(), lease, Instant.now())) {
                fleetOnEpoch = d.epoch();
            }
        } catch (RuntimeException e) {
            LOG.warn("event=mode_follow_failed instance={} error={}", instance, e.toString());
        }
    }

    private void acknowledge(long epoch) {
        boolean quiet;
        synchronized (this) {
            quiet = inFlight.keySet().stream().noneMatch(e -> e < epoch);
        }
        long now = System.nanoTime();
        // a heartbeat every half lease keeps this proxy counted as live; a new epoch is acknowledged at once
        boolean due = epoch != ackedEpoch || now - lastAckNanos > lease.toNanos() / 2;
        if (quiet && due) {
            store.acknowledge(instance, epoch);
            ackedEpoch = epoch;
            lastAckNanos = now;
        } else if (!quiet && now - lastAckNanos > lease.toNanos() / 2) {
            // still live, still on the old epoch: the controller must wait for this proxy, not count it gone
            store.acknowledge(instance, ackedEpoch);
            lastAckNanos = now;
        }
    }

    /**
     * Whether this proxy acknowledged a hold for a restore after {@code nanos} ({@link System#nanoTime}): a cursor opened
     * before then read the state the restore replaced, whatever the phase is now.
     */
    public boolean restoringAckedAfter(long nanos) {
        return restoringAcked && restoringAckedNanos - nanos > 0;
    }

    /** Whether this phase's writes may go ahead: every live proxy acts on the current epoch. */
    public boolean fleetOnCurrentEpoch() {
        return !fleetBehind(view);
    }

    /** Whether some live proxy may not have acknowledged the epoch of {@code v} yet (as this proxy last saw the acknowledgements). */
    private boolean fleetBehind(View v) {
        return v.document().exists() && fleetOnEpoch < v.document().epoch();
    }

    /** The epoch this proxy has acknowledged (-1: none yet). */
    public long acknowledgedEpoch() {
        return ackedEpoch;
    }

    @Override
    public void close() {
        follower.shutdownNow();
        try {
            store.leave(instance);
        } catch (RuntimeException e) {
            LOG.warn("event=mode_leave_failed instance={} error={}", instance, e.toString());
        }
    }
}
