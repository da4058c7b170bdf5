package io.thermocline.proxy.mode;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.ShadowConfig;
import io.thermocline.tiering.cache.ExpiringCache;
import io.thermocline.tiering.mode.FollowerState;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.ShadowEvidence;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shadow mode's evidence: a sample of the reads the fast tier could answer runs there too, on this
 * class's own thread, after the client already has the archive's answer (a bounded queue that drops,
 * and counts, when full: the client never waits). A read is compared only when the fast tier is known
 * to hold at least the archive's state as that read saw it: the archive follower has applied everything
 * up to the read's {@code operationTime}. An agreement then always counts: the fast tier returned exactly
 * the archive's answer. A difference counts as a divergence only if the follower had begun no later change
 * of the namespace when the fast-tier read was done (else the fast tier may simply be ahead of the archive
 * read); otherwise it is skipped and counted. Counts and up to five divergent samples go to
 * {@code thermocline.shadow}, per instance and namespace.
 */
public final class ShadowComparator implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ShadowComparator.class);
    private static final Set<String> NOT_FOR_THE_FAST_TIER = Set.of("lsid", "txnNumber", "$clusterTime", "$readPreference",
            "readConcern", "autocommit", "startTransaction", "$db", "signature", "batchSize", "singleBatch", "afterClusterTime");
    private static final int ALL = 100_000;

    /**
     * A read to compare: the command as the client sent it, the archive's complete answer, the mode epoch it was routed
     * by, and the namespace's coverage that proved the fast tier could answer it.
     */
    public record Sample(String namespace, String shape, String database, BsonDocument command, RawBsonDocument archiveReply,
                         long epoch, CoverageBound coverage) {
    }

    private final MongoClient fast;
    private final ModeStore store;
    private final Function<String, CoverageBound> coverage;
    private final String instance;
    private final ShadowConfig config;
    private final Clock clock;
    private final Duration followerWait;
    private final BlockingQueue<Sample> queue;
    private final Map<String, ShadowEvidence> evidence = new HashMap<>();
    private final ExpiringCache<String, Boolean> lastByShape = new ExpiringCache<>(10_000, Duration.ofHours(24));
    private final AtomicLong dropped = new AtomicLong();
    private final Thread worker;
    private volatile boolean dirty;
    private volatile boolean closed;

    /** {@code coverage}: the namespace's coverage as this proxy routes by it now. */
    public ShadowComparator(MongoClient fast, ModeStore store, Function<String, CoverageBound> coverage, String instance,
                            ShadowConfig config, Clock clock, Duration followerWait) {
        this.fast = fast;
        this.store = store;
        this.coverage = coverage;
        this.instance = instance;
        this.config = config;
        this.clock = clock;
        this.followerWait = followerWait;
        this.queue = new ArrayBlockingQueue<>(config.queueCapacity());
        this.worker = new Thread(this::run, "thermocline-shadow-compare");
        this.worker.setDaemon(true);
        this.worker.start();
    }

    /** A shadowed read of {@code namespace}: counted, and sampled when the fast tier could have answered it. */
    public boolean sampled(String namespace, boolean fastTierCouldAnswer) {
        update(namespace, e -> new ShadowEvidence(e.instance(), e.namespace(), e.reads() + 1, e.wouldServe() + (fastTierCouldAnswer ? 1 : 0),
                e.compared(), e.agreed(), e.diverged(), e.skipped(), e.comparedSinceDivergence(), e.lastComparedAt(),
                e.lastDivergenceAt(), e.samples(), clock.instant()));
        return fastTierCouldAnswer && config.sampleRate() > 0 && ThreadLocalRandom.current().nextDouble() < config.sampleRate();
    }

    /** Queues a comparison; never blocks. A full queue drops it (counted as skipped). */
    public void offer(Sample sample) {
        if (!queue.offer(sample)) {
            dropped.incrementAndGet();
            skipped(sample.namespace());
        }
    }

    /** Whether the last comparison of this shape agreed; empty when none ran. */
    public Optional<Boolean> lastAgreement(String shape) {
        return Optional.ofNullable(lastByShape.get(shape));
    }

    public long dropped() {
        return dropped.get();
    }

    /** This instance's evidence so far (also in {@code thermocline.shadow}). */
    public synchronized Map<String, ShadowEvidence> evidence() {
        return Map.copyOf(evidence);
    }

    private void run() {
        long lastFlush = System.nanoTime();
        while (!closed) {
            try {
                Sample sample = queue.poll(200, TimeUnit.MILLISECONDS);
                if (sample != null) {
                    compare(sample);
                }
                if (dirty && (sample == null || System.nanoTime() - lastFlush > 500_000_000L)) {
                    flush();
                    lastFlush = System.nanoTime();
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("event=shadow_compare_failed error={}", e.toString());
            }
        }
    }

    void compare(Sample s) throws InterruptedException {
        BsonValue time = s.archiveReply().get("operationTime");
        if (time == null || !time.isTimestamp() || !followerCovers(time.asTimestamp())) {
            skipped(s.namespace());
            return;
        }
        BsonDocument fastReply = Blocking.single(fast.getDatabase(s.database()).runCommand(forFastTier(s.command()), BsonDocument.class)).orElseThrow();
        BsonTimestamp changing = store.follower().changing(s.namespace());
        Optional<ResultComparison.Outcome> outcome = outcome(s, fastReply);
        boolean changedSince = changing != null && changing.compareTo(time.asTimestamp()) > 0;
        // once the fleet left the phase the read was made in (a cutover), writes reach the fast tier directly and
        // no follower announcement covers them: the mode document, read after the fast tier, must still be that phase's
        boolean differs = !outcome.map(ResultComparison.Outcome::agreed).orElse(true);
        boolean phaseLeft = differs && store.read().epoch() != s.epoch();
        // the evictor raises the coverage bound (and waits for the proxies to see it) before it removes what fell out of
        // the window: a bound moved since the sample may have taken documents of the archive's answer out of the fast
        // tier, which explains documents missing there and nothing else (a changed field still counts)
        boolean coverageMoved = differs && outcome.get().fields().equals(List.of("$missing"))
                && !coverage.apply(s.namespace()).equals(s.coverage());
        if (outcome.isEmpty() || (changedSince && !outcome.get().agreed()) || phaseLeft || coverageMoved) {
            // a difference after a later change began may be that change (the fast tier is ahead of the archive read): no proof either way
            skipped(s.namespace());
            return;
        }
        if (!outcome.get().agreed()) {
            // what a reader of the log needs to tell lag from a real difference
            LOG.warn("event=shadow_divergence namespace={} documents={} fields={} archiveTime={} followerChanging={} command={}",
                    s.namespace(), outcome.get().ids(), outcome.get().fields(), time.asTimestamp(), changing, s.shape());
        }
        record(s, outcome.get());
    }

    private boolean followerCovers(BsonTimestamp time) throws InterruptedException {
        long deadline = System.nanoTime() + followerWait.toNanos();
        while (true) {
            FollowerState follower = store.follower();
            if (follower.appliedThrough() != null && follower.appliedThrough().compareTo(time) >= 0) {
                return true;
            }
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(20);
        }
    }

    private static Optional<ResultComparison.Outcome> outcome(Sample s, BsonDocument fastReply) {
        RawBsonDocument a = s.archiveReply();
        if (!ok(fastReply)) {
            return Optional.of(new ResultComparison.Outcome(false, List.of(), List.of("$error")));
        }
        if (a.isDocument("cursor")) {
            BsonDocument ac = a.getDocument("cursor");
            BsonDocument fc = fastReply.getDocument("cursor", new BsonDocument());
            if (ac.getNumber("id").longValue() != 0 || !fc.containsKey("id") || fc.getNumber("id").longValue() != 0) {
                return Optional.empty(); // only complete answers compare
            }
            boolean ordered = s.command().containsKey("sort") || s.command().containsKey("pipeline");
            return Optional.of(ResultComparison.compare(documents(ac.getArray("firstBatch")), documents(fc.getArray("firstBatch")), ordered));
        }
        for (String field : List.of("n", "values")) {
            if (a.containsKey(field)) {
                return Optional.of(ResultComparison.compareValue(field, a.get(field), fastReply.get(field, new BsonArray())));
            }
        }
        return Optional.empty();
    }

    private static List<BsonDocument> documents(BsonArray batch) {
        List<BsonDocument> out = new ArrayList<>(batch.size());
        batch.forEach(v -> out.add(v.asDocument()));
        return out;
    }

    private static boolean ok(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1;
    }

    /** The client's read without what belongs to its session or to the archive. */
    static BsonDocument forFastTier(BsonDocument command) {
        BsonDocument out = new BsonDocument();
        command.forEach((k, v) -> {
            if (!NOT_FOR_THE_FAST_TIER.contains(k)) {
                out.append(k, v);
            }
        });
        String name = command.getFirstKey();
        if (name.equals("find")) {
            out.append("batchSize", new BsonInt32(ALL));
        } else if (name.equals("aggregate")) {
            out.put("cursor", new BsonDocument("batchSize", new BsonInt32(ALL)));
        }
        return out;
    }

    private void record(Sample s, ResultComparison.Outcome o) {
        Instant now = clock.instant();
        lastByShape.put(s.shape(), o.agreed());
        update(s.namespace(), e -> {
            List<ShadowEvidence.Sample> samples = e.samples();
            if (!o.agreed()) {
                samples = new ArrayList<>();
                samples.add(new ShadowEvidence.Sample(now, o.ids(), o.fields()));
                samples.addAll(e.samples().subList(0, Math.min(e.samples().size(), ShadowEvidence.MAX_SAMPLES - 1)));
            }
            return new ShadowEvidence(e.instance(), e.namespace(), e.reads(), e.wouldServe(), e.compared() + 1,
                    e.agreed() + (o.agreed() ? 1 : 0), e.diverged() + (o.agreed() ? 0 : 1), e.skipped(),
                    o.agreed() ? e.comparedSinceDivergence() + 1 : 0, now, o.agreed() ? e.lastDivergenceAt() : now,
                    List.copyOf(samples), now);
        });
    }

    private void skipped(String namespace) {
        update(namespace, e -> new ShadowEvidence(e.instance(), e.namespace(), e.reads(), e.wouldServe(), e.compared(), e.agreed(),
                e.diverged(), e.skipped() + 1, e.comparedSinceDivergence(), e.lastComparedAt(), e.lastDivergenceAt(),
                e.samples(), clock.instant()));
    }

    private synchronized void update(String namespace, java.util.function.UnaryOperator<ShadowEvidence> change) {
        evidence.put(namespace, change.apply(evidence.getOrDefault(namespace, ShadowEvidence.empty(instance, namespace))));
        dirty = true;
    }

    /** Writes this instance's evidence to {@code thermocline.shadow}. */
    public void flush() {
        dirty = false;
        for (ShadowEvidence e : evidence().values()) {
            store.saveEvidence(e);
        }
    }

    @Override
    public void close() {
        closed = true;
        worker.interrupt();
    }
}
