package io.thermocline.tiering.mode;

import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ShadowConfig;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.WorkerLoop;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out mode requests for the whole fleet: observes (acknowledgements, then the feeder, then the
 * archive's time), asks {@link Transition} for the next document and writes it with a compare-and-set.
 * Every proxy runs one; the compare-and-set makes any number of them act as one, and a controller
 * that dies between two steps leaves a document the next one continues from.
 */
public final class ModeController implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ModeController.class);

    private final MongoClient archive;
    private final List<CollectionPolicy> policies;
    private final ShadowConfig shadow;
    private final MetadataStore metadata;
    private final ModeStore store;
    private final MirrorBarrier barrier;
    private final Duration ackLease;
    private final Clock clock;
    private final WorkerLoop loop;

    /**
     * {@code ackLease}: a proxy whose acknowledgement is older than this is no longer counted (it fences
     * itself after the same lease without a fresh mode document, so it cannot act on an old one).
     */
    public ModeController(MongoClient fast, MongoClient archive, List<CollectionPolicy> policies, ShadowConfig shadow,
                          String instanceId, Duration interval, Duration ackLease, Clock clock) {
        this.archive = archive;
        this.policies = List.copyOf(policies);
        this.shadow = shadow;
        this.metadata = new MetadataStore(fast);
        this.store = new ModeStore(metadata);
        this.barrier = new MirrorBarrier(fast, metadata, "modes/" + instanceId);
        this.ackLease = ackLease;
        this.clock = clock;
        this.loop = new WorkerLoop("mode-controller", () -> {
            step();
            return interval;
        }, interval.multipliedBy(4));
    }

    public ModeController start() {
        loop.start();
        return this;
    }

    /** One observation and at most one transition; returns the document as it is now. */
    public ModeDocument step() throws InterruptedException {
        ModeDocument d = store.read();
        if (!d.exists()) {
            return d;
        }
        Instant now = clock.instant();
        boolean acked = store.fleetAcked(d.epoch(), ackLease, now);
        // read once, before the archive's time below, so the follower's lag is never under-reported
        FollowerState follower = store.follower();
        boolean feederDrained = false;
        FeederCheckpoint feeder = metadata.feederCheckpoint();
        if (acked && d.phase() == Phase.DRAINING) {
            feederDrained = barrier.sync(Duration.ofSeconds(2)).isPresent();
        }
        BsonTimestamp archiveNow = acked && (d.phase() == Phase.DRAINING || d.phase() == Phase.CUTTING_OVER) ? archiveTime(archive) : null;
        Optional<String> gate = Optional.empty();
        boolean cutoverAsked = d.requested() == io.thermocline.config.Mode.TIERED && !d.override();
        if (cutoverAsked && (d.phase() == Phase.SHADOWING || d.phase() == Phase.DRAINED)) {
            // the follower first: without it no shadow evidence accrues either
            gate = CutoverGate.follower(follower, archiveTimeOrNull(), now);
            if (gate.isEmpty() && d.phase() == Phase.SHADOWING) {
                gate = CutoverGate.refusal(policies, metadata.namespaces(), store.evidence(), shadow, now);
            }
        }
        Transition.Facts facts = new Transition.Facts(acked, feederDrained, feederDrained ? 0 : feeder.lagSeconds(),
                feederDrained ? 0 : feeder.pendingEvents(), archiveNow, follower.appliedThrough(), gate, now);
        Optional<ModeDocument> next = Transition.next(d, facts);
        if (next.isEmpty()) {
            return d;
        }
        try {
            ModeDocument saved = store.save(d, next.get());
            if (saved.epoch() != d.epoch() || !java.util.Objects.equals(saved.refusal(), d.refusal())) {
                LOG.info("event=mode_transition requested={} active={} phase={} epoch={} refusal=\"{}\"", saved.requested().configName(),
                        saved.active().configName(), saved.phase().documentName(), saved.epoch(),
                        saved.refusal() == null ? "" : saved.refusal());
            }
            return saved;
        } catch (StaleStateException e) {
            return store.read(); // another controller moved it first: it decides from there
        }
    }

    /**
     * The archive's present: the operationTime of a ping, which every write acknowledged before it precedes (also
     * what {@code thermocline status} measures the archive follower's lag against).
     */
    public static BsonTimestamp archiveTime(MongoClient archive) {
        return archiveTime(archive, null);
    }

    /** As {@link #archiveTime(MongoClient)}, giving up after {@code timeout} (null: the client's own limits). */
    public static BsonTimestamp archiveTime(MongoClient archive, java.time.Duration timeout) {
        ClientSession session = Blocking.single(archive.startSession()).orElseThrow();
        try {
            var admin = archive.getDatabase("admin");
            if (timeout != null) {
                admin = admin.withTimeout(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            Blocking.single(admin.runCommand(session, new BsonDocument("ping", new BsonInt32(1))));
            BsonTimestamp time = session.getOperationTime();
            if (time == null) {
                throw new IllegalStateException("the archive returned no operationTime: it must be a replica set for mode switches");
            }
            return time;
        } finally {
            session.close();
        }
    }

    private BsonTimestamp archiveTimeOrNull() {
        try {
            return archiveTime(archive);
        } catch (RuntimeException unreachable) {
            return null;
        }
    }

    @Override
    public void close() {
        loop.close();
    }
}
