package io.thermocline.proxy.topology;

import io.netty.channel.EventLoopGroup;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells a tier that answers {@code hello} but stalls its commands (a stalled disk, a stuck primary, a long pause)
 * from one that serves. Every {@code interval} the primary is asked a real read ({@code read}: a point lookup that
 * finds nothing) on a logged-in connection of its own, one at a time. A read unanswered for
 * {@code stallConfirmed} ({@link #DEFAULT_STALL_CONFIRMED} unless set) makes the tier stalled since it was sent, until
 * one is answered within {@code stallConfirmed}: requests that need the tier then fail fast and retryably instead of
 * each waiting out its own deadline (docs/faults.md). An answer that itself took that long does not end the stall:
 * it shows the command path blocked for as long (a paused primary lets each command through after its pause), and
 * treating it as serving let every request in the next {@code stallConfirmed} wait out the pause again. Any reply
 * counts as an answer, an error too: the command path answered. A connection that fails gives no verdict (the
 * monitor's {@code hello} tells an unreachable tier).
 */
public final class ServingProbe implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServingProbe.class);

    private final TierMonitor monitor;
    private final EventLoopGroup group;
    private final BsonDocument read;
    private final Duration interval;
    private final Duration stallConfirmed;
    /** {@link System#nanoTime} when the read in flight was sent (0: none in flight). */
    private volatile long sentAt;
    /** Whether the tier was reported stalled (for the log line when it serves again). */
    private volatile boolean reportedStalled;
    /** {@link System#nanoTime} when the stall a late answer showed began (0: none; a prompt answer ends it). */
    private volatile long stalledSince;
    /** How many reads were answered only after {@code stallConfirmed}. */
    private final java.util.concurrent.atomic.AtomicLong lateAnswers = new java.util.concurrent.atomic.AtomicLong();

    private volatile boolean closed;
    private final OwnConnection connection;
    private volatile ScheduledFuture<?> next;

    public ServingProbe(
            TierMonitor monitor,
            BackendConnector connector,
            EventLoopGroup group,
            Function<BackendConnection, CompletableFuture<Void>> login,
            BsonDocument read,
            Duration interval,
            Duration stallConfirmed) {
        this.monitor = monitor;
        this.group = group;
        this.connection = new OwnConnection(connector, login);
        this.read = read;
        this.interval = interval;
        this.stallConfirmed = stallConfirmed;
    }

    /** The probe's read: a count of one {@code _id} no document has, on a collection the tier's user reads anyway. */
    public static BsonDocument pointCount(String database, String collection) {
        return new BsonDocument("count", new BsonString(collection))
                .append("query", new BsonDocument("_id", new BsonString("thermocline-serving-probe")))
                .append("limit", new BsonInt32(1))
                .append("$db", new BsonString(database));
    }

    public ServingProbe start() {
        schedule();
        return this;
    }

    /**
     * A point count left unanswered this long means a stalled primary, not a busy one: a healthy primary on a loaded
     * machine (a 2-core box at load 26) left the probe unanswered past 2 s, and every archive-routed read was refused
     * meanwhile that would have been served. A stall shorter than this is waited out, as against the archive alone.
     * The proxy's default ({@code ProxySettings#stallConfirmed}); tests that stall an archive on purpose set less.
     */
    public static final Duration DEFAULT_STALL_CONFIRMED = Duration.ofSeconds(10);

    /** How long the tier's primary has left a read unanswered, once that is {@code stallConfirmed} or more. */
    public Optional<Duration> stalledFor() {
        long since = stalledSince;
        if (since != 0) {
            return Optional.of(Duration.ofNanos(System.nanoTime() - since));
        }
        long sent = sentAt;
        if (sent == 0) {
            return Optional.empty();
        }
        Duration waited = Duration.ofNanos(System.nanoTime() - sent);
        return waited.compareTo(stallConfirmed) >= 0 ? Optional.of(waited) : Optional.empty();
    }

    private void schedule() {
        if (!closed) {
            next = group.schedule(this::probe, interval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void probe() {
        if (closed) {
            return;
        }
        Optional<Duration> stalled = stalledFor();
        if (stalled.isPresent() && !reportedStalled) {
            reportedStalled = true;
            LOG.warn(
                    "event=tier_stalled tier={} waited_ms={} action=refuse_requests_needing_it hint=\"the primary answers hello"
                            + " but has not answered a read: check its disk and locks\"",
                    monitor.tier().label(),
                    stalled.get().toMillis());
        }
        var primary = monitor.topology().primaryAddress();
        if (sentAt != 0 || primary.isEmpty()) {
            schedule(); // one read at a time: the one in flight decides
            return;
        }
        long sent = System.nanoTime();
        sentAt = sent;
        long[] asked = {sent};
        connection
                .to(primary.get())
                .thenCompose(open -> {
                    asked[0] = System.nanoTime(); // a slow connect or login is not the command path's stall
                    return open.roundTrip(OpMsg.request(BackendConnection.nextRequestId(), read), null);
                })
                .whenComplete((reply, error) -> {
                    long took = System.nanoTime() - asked[0];
                    if (error != null) {
                        connection.drop();
                    } else if (took >= stallConfirmed.toNanos()) {
                        lateAnswers.incrementAndGet();
                        if (stalledSince == 0) {
                            stalledSince = sent; // stalled still: only a prompt answer shows the tier serving
                        }
                    } else {
                        long since = stalledSince;
                        stalledSince = 0;
                        if (reportedStalled) {
                            reportedStalled = false;
                            LOG.info(
                                    "event=tier_serving tier={} stalled_ms={}",
                                    monitor.tier().label(),
                                    Duration.ofNanos(System.nanoTime() - (since != 0 ? since : sent))
                                            .toMillis());
                        }
                    }
                    sentAt = 0;
                });
        schedule();
    }

    /** How many of the probe's reads were answered only after {@code stallConfirmed} (a stall that let them through). */
    public long lateAnswers() {
        return lateAnswers.get();
    }

    @Override
    public void close() {
        closed = true;
        ScheduledFuture<?> n = next;
        if (n != null) {
            n.cancel(false);
        }
        connection.drop();
    }
}
