package io.thermocline.proxy.tiered.writes;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.provenance.CopyMarks;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The copies a guarded transaction makes before the client's write, inside that transaction: archived
 * versions the fast tier lacks, and documents the evictor removed since the attempt's read. Decisions
 * by {@link GuardedCopy}; every copy claims its documents' fences first ({@link Fences#claim}), so a
 * concurrent user delete or eviction of one of them conflicts with the copy instead of both committing.
 * Every copy is marked ({@link CopyMarks}): application change streams leave its insert out, as one
 * database shows only the user's own write.
 */
final class GuardedCopies {

    private final MongoClient fast;
    private final ArchiveReads archive;
    private final Fences fences;
    private final CopyMarks marks;
    private final Duration maxInFlight;

    GuardedCopies(MongoClient fast, ArchiveReads archive, Fences fences, CopyMarks marks, Duration maxInFlight) {
        this.fast = fast;
        this.archive = archive;
        this.fences = fences;
        this.marks = marks;
        this.maxInFlight = maxInFlight;
    }

    /**
     * Copies the archived versions the copy-up rule allows ({@code fencesAtRead}: read before the sync
     * barrier and the archive read, with the namespace's drop fence); returns their ids, or null when
     * the attempt must start over.
     */
    List<BsonValue> copyMissing(
            ClientSession session,
            String namespace,
            Map<BsonValue, BsonDocument> archived,
            Map<BsonValue, Fence> fencesAtRead,
            long startedNanos) {
        if (archived.isEmpty()) {
            return List.of();
        }
        List<BsonValue> candidates = new ArrayList<>(archived.keySet());
        Set<BsonValue> present = TierQueries.idsIn(fast, session, namespace, candidates);
        List<BsonValue> absent = new ArrayList<>(candidates);
        absent.removeAll(present);
        // claim before reading: a delete committed before the claim is seen below, a later one conflicts
        fences.claim(session, namespace, absent);
        Map<BsonValue, Fence> fencesNow = fences.read(session, namespace, Fences.withDropFence(candidates));
        List<BsonValue> ids = GuardedCopy.toCopy(
                candidates,
                present,
                fencesAtRead,
                fencesNow,
                Instant.now(),
                Duration.ofNanos(System.nanoTime() - startedNanos),
                maxInFlight);
        if (ids == null) {
            return null;
        }
        List<BsonDocument> copies = new ArrayList<>();
        ids.forEach(id -> copies.add(archived.get(id)));
        return copies.isEmpty() || insertedAll(session, namespace, copies) ? ids : null;
    }

    /**
     * Copies back the documents the fast tier held at the attempt's read that the evictor removed since
     * ({@link GuardedCopy#ofVanished}); false when the attempt must start over.
     */
    boolean restoreEvicted(ClientSession session, String namespace, Set<BsonValue> held) {
        if (held.isEmpty()) {
            return true;
        }
        Set<BsonValue> present = TierQueries.idsIn(fast, session, namespace, new ArrayList<>(held));
        List<BsonValue> vanished = new ArrayList<>(held);
        vanished.removeAll(present);
        if (vanished.isEmpty()) {
            return true;
        }
        fences.claim(session, namespace, vanished); // a user delete of one of them then conflicts with the copy back
        Map<BsonValue, Fence> fenced = fences.read(session, namespace, vanished);
        List<BsonValue> evicted = new ArrayList<>();
        for (BsonValue id : vanished) {
            switch (GuardedCopy.ofVanished(fenced.get(id))) {
                case COPY -> evicted.add(id);
                case START_OVER -> {
                    return false;
                }
                case SKIP -> {}
            }
        }
        if (evicted.isEmpty()) {
            return true;
        }
        // the version the eviction removed, from its fence: the archive may still hold an older one until the
        // feeder has mirrored the writes before the eviction (a fence without it: the archive held it at the eviction)
        Map<BsonValue, BsonDocument> versions = fences.evictedVersions(session, namespace, evicted);
        List<BsonValue> fromArchive = new ArrayList<>(evicted);
        fromArchive.removeAll(versions.keySet());
        List<BsonDocument> copies = new ArrayList<>(versions.values());
        if (!fromArchive.isEmpty()) {
            copies.addAll(TierQueries.documents(archive.client("write"), namespace, fromArchive));
        }
        return copies.size() == evicted.size() && insertedAll(session, namespace, copies);
    }

    /** Whether the fast tier holds every one of {@code ids}, read inside the transaction. */
    boolean allPresent(ClientSession session, String namespace, List<BsonValue> ids) {
        return ids.isEmpty() || TierQueries.idsIn(fast, session, namespace, ids).size() == new HashSet<>(ids).size();
    }

    /**
     * Copies the archived versions of cold targets of a delete (their fences claimed and checked by the
     * caller), so that the delete then runs on the fast tier and the fast tier's change stream shows it, in
     * order, with its own resume token; false when the attempt must start over.
     */
    boolean copyToDelete(ClientSession session, String namespace, List<BsonDocument> archived) {
        return archived.isEmpty() || insertedAll(session, namespace, archived);
    }

    /**
     * Inserts copies inside the guarded transaction, marked as copies; false when another transaction inserted one of them
     * since it was checked (another replica's guarded copy of the same document, a user insert): the attempt
     * starts over and then finds it. MongoDB reports that as a WriteConflict (transient, retried anyway),
     * a read-committed server as a duplicate key.
     */
    private boolean insertedAll(ClientSession session, String namespace, List<BsonDocument> copies) {
        try {
            Blocking.run(TierQueries.collection(fast, namespace).insertMany(session, copies));
            marks.mark(
                    session, namespace, copies.stream().map(d -> d.get("_id")).toList());
            return true;
        } catch (MongoBulkWriteException e) {
            if (e.getWriteErrors().stream()
                    .allMatch(w -> ErrorCategory.fromErrorCode(w.getCode()) == ErrorCategory.DUPLICATE_KEY)) {
                return false;
            }
            throw e;
        }
    }
}
