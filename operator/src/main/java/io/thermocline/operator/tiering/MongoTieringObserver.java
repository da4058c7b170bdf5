package io.thermocline.operator.tiering;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.UpdateOptions;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * Reads the feeder's checkpoint from the fast tier's metadata ({@value #METADATA_DB}.{@value #STATE},
 * document {@code _id: "feeder"}, written by the data plane's {@code MetadataStore}): its lag, and
 * whether the archive holds every fast-tier write. "Drained" uses the data plane's own sync barrier:
 * a probe written to {@value #METADATA_DB}.{@value #PROBES} (which the feeder watches) is covered
 * by the checkpoint's {@code mirroredThrough} only once every earlier write is in the archive.
 */
@ApplicationScoped
public class MongoTieringObserver implements TieringObserver {

    static final String METADATA_DB = "thermocline";
    static final String STATE = "state";
    static final String PROBES = "probes";
    private static final int TIMEOUT_SECONDS = 5;
    private static final long DRAIN_WAIT_MILLIS = 3000;

    private final TierClients clients = new TierClients(Duration.ofMinutes(10), TIMEOUT_SECONDS, Clock.systemUTC());

    @Override
    public Optional<TieringSnapshot> observe(TieringTarget target) {
        try {
            MongoClient fast = clients.forUri(target.fastTierUri());
            MongoClient archive = clients.forUri(target.archiveUri());
            var state = fast.getDatabase(METADATA_DB).getCollection(STATE);
            Document checkpoint = state.find(new Document("_id", "feeder")).first();
            Long lag = checkpoint != null && checkpoint.get("lagSeconds") instanceof Number n
                    ? Math.round(n.doubleValue())
                    : null;
            boolean drained = checkpoint != null && drained(fast, state);
            long fastCount = 0;
            for (String ns : target.namespaces()) {
                String[] parts = ns.split("\\.", 2);
                fastCount += fast.getDatabase(parts[0]).getCollection(parts[1]).estimatedDocumentCount();
            }
            TieringSnapshot.FeederAlerts alerts =
                    alerts(state.find(new Document("_id", "feederHealth")).first());
            Long archiveCount = 0L;
            List<String> uniqueIndexes = new ArrayList<>();
            try {
                for (String ns : target.namespaces()) {
                    String[] parts = ns.split("\\.", 2);
                    var archived = archive.getDatabase(parts[0]).getCollection(parts[1]);
                    archiveCount += archived.estimatedDocumentCount();
                    uniqueIndexes.addAll(UniqueIndexCoverage.gaps(
                            ns,
                            fast.getDatabase(parts[0])
                                    .getCollection(parts[1])
                                    .listIndexes()
                                    .into(new ArrayList<>()),
                            archived.listIndexes().into(new ArrayList<>())));
                }
            } catch (MongoException e) {
                // an archive outage: the feeder's progress and why it cannot mirror are in the fast tier, and are what
                // FeederHealthy must say now; the archive's count and index gaps are unknown (null), not zero or none
                archiveCount = null;
                uniqueIndexes = null;
            }
            return Optional.of(new TieringSnapshot(lag, drained, fastCount, archiveCount, uniqueIndexes, alerts));
        } catch (MongoException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** The feeder's dead letters, resync state and archive outage, as its {@code MetadataStore.saveFeederHealth} writes them. */
    static TieringSnapshot.FeederAlerts alerts(Document health) {
        if (health == null) {
            return TieringSnapshot.FeederAlerts.NONE;
        }
        long deadLetters = health.get("deadLetters") instanceof Number n ? n.longValue() : 0;
        Instant lostAt = null;
        boolean resyncing = false;
        if (health.get("historyLost") instanceof Document lost) {
            lostAt = lost.getDate("detectedAt") == null
                    ? null
                    : lost.getDate("detectedAt").toInstant();
            resyncing = lost.get("resyncedAt") == null;
        }
        TieringSnapshot.ArchiveOutage outage = null;
        if (health.get("archiveUnavailable") instanceof Document down) {
            outage = new TieringSnapshot.ArchiveOutage(
                    down.getString("why"),
                    down.getDate("since") == null ? null : down.getDate("since").toInstant(),
                    down.getString("cause"));
        }
        return new TieringSnapshot.FeederAlerts(
                deadLetters, health.getString("oldestDeadLetter"), lostAt, resyncing, outage);
    }

    /** Writes a probe and waits briefly for the feeder's checkpoint to cover it. */
    private static boolean drained(MongoClient fast, MongoCollection<Document> state) {
        BsonTimestamp probe;
        try (ClientSession session = fast.startSession()) {
            fast.getDatabase(METADATA_DB)
                    .getCollection(PROBES)
                    .updateOne(
                            session,
                            new Document("_id", "operator"),
                            new Document("$inc", new Document("seq", 1L))
                                    .append("$set", new Document("at", new Date())),
                            new UpdateOptions().upsert(true));
            probe = session.getOperationTime();
        }
        if (probe == null) {
            return false;
        }
        long deadline = System.currentTimeMillis() + DRAIN_WAIT_MILLIS;
        do {
            Document checkpoint = state.find(new Document("_id", "feeder")).first();
            if (checkpoint != null
                    && checkpoint.get("mirroredThrough") instanceof BsonTimestamp mirrored
                    && mirrored.compareTo(probe) >= 0) {
                return true;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        } while (System.currentTimeMillis() < deadline);
        return false;
    }

    @PreDestroy
    void close() {
        clients.close();
    }
}
