package io.thermocline.proxy.tiered;

import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.config.TlsConfig;
import io.thermocline.proxy.causal.FastTierWrites;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.worker.TierClients;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This proxy's own change stream over the whole fast tier (each event reduced to its namespace, key
 * and time), feeding {@link FastTierWrites}: which tiered namespaces were written when, and how far the
 * stream has read. Its position is the stream's {@code postBatchResumeToken}, which moves past every
 * oplog entry the server has scanned, events or not, so an idle fast tier is read through its present
 * within one {@link #MAX_AWAIT}. One thread, its own small driver client (the sync driver exposes that
 * token; the reactive one does not).
 */
final class FastTierWriteStream implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(FastTierWriteStream.class);
    /** How long a getMore waits for new entries: the most an entry no event shows (a no-op) delays the stream's position. */
    static final Duration MAX_AWAIT = Duration.ofMillis(50);

    private static final Duration RETRY = Duration.ofMillis(200);
    /** The most a ping (or a getMore, which waits at most {@link #MAX_AWAIT} on the server) may take. */
    static final Duration PING_TIMEOUT = Duration.ofSeconds(3);

    private static final String STATE = MetadataStore.DATABASE + "." + MetadataStore.STATE;
    private static final BsonString FEEDER_ID = new BsonString(MetadataStore.FEEDER_ID);
    private static final String CHECKPOINT_FIELD = "mirroredThrough";
    /**
     * Events without their documents (a tiered insert's may be large, and every proxy reads every one), except
     * the feeder's checkpoint, cut down to its mirrored-through: a read waiting for the feeder learns of its
     * progress as it commits, without polling the checkpoint.
     */
    private static final List<Bson> PIPELINE = List.of(
            new BsonDocument(
                    "$set",
                    new BsonDocument(
                            "fullDocument",
                            new BsonDocument(
                                    "$cond",
                                    new BsonArray(List.of(
                                            new BsonDocument(
                                                    "$and",
                                                    new BsonArray(List.of(
                                                            new BsonDocument(
                                                                    "$eq",
                                                                    new BsonArray(List.of(
                                                                            new BsonString("$ns.db"),
                                                                            new BsonString(MetadataStore.DATABASE)))),
                                                            new BsonDocument(
                                                                    "$eq",
                                                                    new BsonArray(List.of(
                                                                            new BsonString("$ns.coll"),
                                                                            new BsonString(MetadataStore.STATE)))),
                                                            new BsonDocument(
                                                                    "$eq",
                                                                    new BsonArray(List.of(
                                                                            new BsonString("$documentKey._id"),
                                                                            FEEDER_ID)))))),
                                            new BsonDocument(
                                                    CHECKPOINT_FIELD,
                                                    new BsonString("$fullDocument." + CHECKPOINT_FIELD)),
                                            BsonNull.VALUE))))),
            Aggregates.project(Projections.exclude("fullDocumentBeforeChange", "updateDescription")));

    private final MongoClient fast;
    private final FastTierWrites writes;
    private final Set<String> tiered;
    private final Supplier<BsonTimestamp> mirroredThrough;
    private final java.util.function.Consumer<BsonTimestamp> checkpoints;
    /** Tests hold the stream here, between receiving a write and recording it. */
    private final Runnable received;

    private final Thread reader;
    private volatile boolean closed;

    /**
     * @param mirroredThrough the feeder's persisted mirrored-through: a fresh stream starts there, so that
     *                        every write it has not mirrored is seen (at the fast tier's present when there is none)
     * @param checkpoints     told each mirrored-through the feeder checkpoints, as the stream shows it
     */
    FastTierWriteStream(
            String fastUri,
            TlsConfig tls,
            String instanceId,
            Set<String> tiered,
            FastTierWrites writes,
            Supplier<BsonTimestamp> mirroredThrough,
            java.util.function.Consumer<BsonTimestamp> checkpoints,
            Runnable received) {
        this.fast = MongoClients.create(TierClients.settings(fastUri, tls)
                .applicationName("thermocline-proxy-writes")
                .readPreference(ReadPreference.primary())
                .applyToConnectionPoolSettings(p -> p.maxSize(8))
                // reads run the ping in their own thread: a fast tier that does not answer must fail them within about
                // proxy.causalWaitTimeout's default (they then probe, and fail retryably), not the driver's 30 s or
                // never
                .applyToClusterSettings(c -> c.serverSelectionTimeout(PING_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                .applyToSocketSettings(b -> b.readTimeout((int) PING_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                .build());
        this.writes = writes;
        this.tiered = Set.copyOf(tiered);
        this.mirroredThrough = mirroredThrough;
        this.checkpoints = checkpoints;
        this.received = received;
        this.reader = new Thread(this::run, "thermocline-writes-" + instanceId);
        reader.setDaemon(true);
    }

    FastTierWriteStream start() {
        reader.start();
        return this;
    }

    private void run() {
        BsonDocument resumeAfter = null;
        while (!closed) {
            try {
                resumeAfter = follow(resumeAfter);
            } catch (RuntimeException e) {
                // reads probe meanwhile (they find the stream behind the present): never a reason to stop following
                if (closed) {
                    return;
                }
                if (e instanceof MongoException error && Feeder.historyLost(error)) {
                    resumeAfter = null; // start afresh: reads ask the probe until mirrored-through passes the new start
                }
                LOG.warn(
                        "event=fast_tier_write_stream_restart error=\"{}\" resume={}",
                        e.toString(),
                        resumeAfter != null);
                try {
                    Thread.sleep(RETRY.toMillis());
                } catch (InterruptedException interrupted) {
                    return;
                }
            }
        }
    }

    /** Reads the stream until it fails; returns where to resume. */
    private BsonDocument follow(BsonDocument resumeAfter) {
        var watch = fast.watch(PIPELINE, BsonDocument.class).maxAwaitTime(MAX_AWAIT.toMillis(), TimeUnit.MILLISECONDS);
        if (resumeAfter != null) {
            watch = watch.resumeAfter(resumeAfter);
        } else {
            BsonTimestamp start = mirroredThrough.get();
            if (start == null || start.getValue() == 0) {
                start = present(); // the fast tier's present: nothing mirrored yet, or that point left the oplog
            }
            writes.openedAt(start);
            watch = watch.startAtOperationTime(start);
        }
        BsonDocument token = resumeAfter;
        try (MongoChangeStreamCursor<ChangeStreamDocument<BsonDocument>> cursor = watch.cursor()) {
            while (!closed) {
                ChangeStreamDocument<BsonDocument> event = cursor.tryNext();
                if (event != null && isFeederCheckpoint(event)) {
                    BsonValue through = event.getFullDocument().get(CHECKPOINT_FIELD);
                    if (through != null && through.isTimestamp()) {
                        checkpoints.accept(through.asTimestamp());
                    }
                } else if (event != null) {
                    List<String> touched = touched(
                            event.getOperationTypeString(),
                            namespaceOf(event.getNamespaceDocument()),
                            namespaceOf(event.getDestinationNamespaceDocument()),
                            event.getDocumentKey(),
                            tiered);
                    if (!touched.isEmpty()) {
                        received.run();
                        writes.wrote(touched, event.getClusterTime());
                    }
                }
                BsonDocument next = cursor.getResumeToken();
                if (next == null) {
                    continue;
                }
                token = next;
                BsonTimestamp at = ResumeTokens.clusterTime(next);
                if (at == null) {
                    throw new IllegalStateException("the fast tier's resume token " + next.toJson()
                            + " carries no cluster time this proxy can read");
                }
                // the event's own token inside a transaction: its other events share the time and may come in the next
                // batch
                boolean midTransaction =
                        event != null && next.equals(event.getResumeToken()) && event.getTxnNumber() != null;
                writes.readThrough(midTransaction ? io.thermocline.tiering.ClusterTimes.justBefore(at) : at);
            }
        }
        return token;
    }

    /**
     * The fast-tier primary's last applied optime: the operationTime of a {@code ping}, a read, which a primary
     * answers with the optime it has applied (every write it acknowledged before is at or before it). Run in the
     * caller's thread on this stream's client: no hand-off to another thread.
     */
    BsonTimestamp present() {
        BsonValue time = fast.getDatabase("admin")
                .runCommand(new BsonDocument("ping", new org.bson.BsonInt32(1)), BsonDocument.class)
                .get("operationTime");
        if (time == null || !time.isTimestamp()) {
            throw new IllegalStateException(
                    "the fast tier answered a ping without an operationTime: it must be a replica set");
        }
        return time.asTimestamp();
    }

    private static boolean isFeederCheckpoint(ChangeStreamDocument<BsonDocument> event) {
        return STATE.equals(namespaceOf(event.getNamespaceDocument()))
                && event.getDocumentKey() != null
                && FEEDER_ID.equals(event.getDocumentKey().get("_id"))
                && event.getFullDocument() != null;
    }

    private static String namespaceOf(BsonDocument ns) {
        if (ns == null || !ns.isString("db")) {
            return null;
        }
        return ns.isString("coll")
                ? ns.getString("db").getValue() + "." + ns.getString("coll").getValue()
                : ns.getString("db").getValue();
    }

    /**
     * The tiered namespaces whose archive copy an event changes once the feeder mirrors it: the event's own
     * namespace and a rename's target, every tiered collection of a dropped database, and for a fence the
     * namespace it names (a delete of a document only the archive held may write nothing but the fence).
     * A fence's removal (its expiry) changes nothing the feeder mirrors.
     *
     * @param namespace "db.coll", or "db" for a database-wide event
     */
    static List<String> touched(
            String operationType, String namespace, String renamedTo, BsonDocument documentKey, Set<String> tiered) {
        List<String> touched = new ArrayList<>();
        if (namespace == null) {
            return touched;
        }
        if (namespace.equals(MetadataStore.DATABASE + "." + MetadataStore.FENCES)) {
            if ("delete".equals(operationType)) {
                return touched;
            }
            BsonValue id = documentKey == null ? null : documentKey.get("_id");
            Fence.Target target = Fence.target(id);
            if (target == null) {
                touched.addAll(tiered); // a fence this proxy cannot read may name any of them
            } else if (tiered.contains(target.namespace())) {
                touched.add(target.namespace());
            }
            return touched;
        }
        if (!namespace.contains(".")) {
            tiered.stream().filter(ns -> ns.startsWith(namespace + ".")).forEach(touched::add);
            return touched;
        }
        if (tiered.contains(namespace)) {
            touched.add(namespace);
        }
        if (renamedTo != null && tiered.contains(renamedTo) && !touched.contains(renamedTo)) {
            touched.add(renamedTo);
        }
        return touched;
    }

    @Override
    public void close() {
        closed = true;
        fast.close();
        reader.interrupt();
    }
}
