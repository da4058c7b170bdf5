package io.thermocline.tiering.metadata;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.metrics.BarrierWaits;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.util.Date;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;

/**
 * The sync barrier: "every fast-tier write committed before now is in the archive". It writes a
 * probe to {@code thermocline.probes} (which the feeder watches), takes the probe's cluster time
 * from the server's {@code operationTime}, and waits until the feeder's persisted mirrored-through
 * covers it. The probe also makes the feeder advance when no user writes flow.
 */
public final class MirrorBarrier {

    private static final Duration POLL = Duration.ofMillis(20);

    private final MongoClient fast;
    private final MetadataStore store;
    private final String probeId;
    private volatile BarrierWaits waits = BarrierWaits.NONE;

    public MirrorBarrier(MongoClient fast, MetadataStore store, String probeId) {
        this.fast = fast;
        this.store = store;
        this.probeId = probeId;
    }

    /** Records every wait from now on in {@code waits}; returns this. */
    public MirrorBarrier countingIn(BarrierWaits waits) {
        this.waits = waits;
        return this;
    }

    /** Writes a probe and returns its fast-tier cluster time. */
    public BsonTimestamp probe() {
        ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
        try {
            Blocking.run(store.collection(MetadataStore.PROBES).updateOne(session, Filters.eq("_id", probeId),
                    Updates.combine(Updates.inc("seq", 1L), Updates.set("at", new Date())), new UpdateOptions().upsert(true)));
            BsonTimestamp time = session.getOperationTime();
            if (time == null) {
                throw new IllegalStateException("the fast tier returned no operationTime: it must be a replica set (MongoDB 4.0+) for the workers to know what the feeder has mirrored");
            }
            return time;
        } finally {
            session.close();
        }
    }

    /** Waits until the archive holds every fast-tier write up to {@code time}; empty on timeout. */
    public Optional<FeederCheckpoint> awaitMirrored(BsonTimestamp time, Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (true) {
            FeederCheckpoint checkpoint = store.feederCheckpoint();
            if (checkpoint.covers(time)) {
                waits.record(System.nanoTime() - start, true);
                return Optional.of(checkpoint);
            }
            if (System.nanoTime() > deadline) {
                waits.record(System.nanoTime() - start, false);
                return Optional.empty();
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /** Probe, then wait for it: returns the probe's time once mirrored, empty on timeout. */
    public Optional<BsonTimestamp> sync(Duration timeout) throws InterruptedException {
        BsonTimestamp time = probe();
        return awaitMirrored(time, timeout).map(c -> time);
    }

}
