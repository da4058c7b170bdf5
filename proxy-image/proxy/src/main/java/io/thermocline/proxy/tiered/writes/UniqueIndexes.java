package io.thermocline.proxy.tiered.writes;

import com.mongodb.MongoCommandException;
import com.mongodb.client.model.Filters;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.proxy.tiered.writes.UniqueKeys.UniqueIndex;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Unique secondary indexes across the tiers: which documents hold the keys a write gives its documents.
 * The indexes are read from the fast tier (DDL reaches both tiers) and kept {@link #FRESH} per namespace,
 * so a unique index is enforced across tiers from at most that long after it was created.
 */
final class UniqueIndexes {

    static final Duration FRESH = Duration.ofSeconds(1);

    private record Known(List<UniqueIndex> indexes, long readNanos) {}

    private final MongoClient fast;
    private final ArchiveReads archive;
    private final Fences fences;
    private final Map<String, Known> known = new ConcurrentHashMap<>();

    UniqueIndexes(MongoClient fast, ArchiveReads archive, Fences fences) {
        this.fast = fast;
        this.archive = archive;
        this.fences = fences;
    }

    /** The namespace's unique secondary indexes (none when the collection does not exist). */
    List<UniqueIndex> of(String namespace) {
        Known k = known.get(namespace);
        if (k != null && System.nanoTime() - k.readNanos() < FRESH.toNanos()) {
            return k.indexes();
        }
        List<UniqueIndex> indexes = new ArrayList<>();
        try {
            for (BsonDocument spec :
                    Blocking.list(TierQueries.collection(fast, namespace).listIndexes(BsonDocument.class))) {
                UniqueIndex.of(spec).ifPresent(indexes::add);
            }
        } catch (MongoCommandException e) {
            if (e.getErrorCode() != 26) { // NamespaceNotFound: no collection, no index
                throw e;
            }
        }
        known.put(namespace, new Known(List.copyOf(indexes), System.nanoTime()));
        return indexes;
    }

    /**
     * The ids of other documents holding one of the keys {@code documents} carry: the fast tier first, then
     * the archive (as for {@code _id}: a holder in the fast tier at the first read is guarded as held, so an
     * eviction after it is undone in the write's transaction; one evicted before it is in the archive at the
     * second). Empty without unique indexes.
     */
    List<BsonValue> holders(String namespace, List<BsonDocument> documents) {
        List<UniqueIndex> indexes = of(namespace);
        if (indexes.isEmpty()) {
            return List.of();
        }
        Optional<BsonDocument> filter = UniqueKeys.holders(indexes, documents);
        if (filter.isEmpty()) {
            return List.of();
        }
        Set<BsonValue> ids = new LinkedHashSet<>(TierQueries.idsMatching(fast, null, namespace, filter.get(), null, 0));
        ids.addAll(TierQueries.idsMatching(archive.client("write"), null, namespace, filter.get(), null, 0));
        return new ArrayList<>(ids);
    }

    /**
     * Inside a guarded write's transaction, after the client's command: the documents the archive holds with
     * a key the written documents now have, other than those the fast tier superseded with a version of
     * another key (the fast tier's newer version wins) and those a user deleted. Empty without unique indexes.
     */
    List<BsonValue> archiveOnlyHolders(ClientSession session, String namespace, List<BsonValue> written) {
        List<UniqueIndex> indexes = of(namespace);
        if (indexes.isEmpty() || written.isEmpty()) {
            return List.of();
        }
        List<BsonDocument> now =
                Blocking.list(TierQueries.collection(fast, namespace).find(session, Filters.in("_id", written)));
        Optional<BsonDocument> filter = UniqueKeys.holders(indexes, now);
        if (filter.isEmpty()) {
            return List.of();
        }
        List<BsonValue> inArchive =
                TierQueries.idsMatching(archive.client("write"), null, namespace, filter.get(), null, 0);
        if (inArchive.isEmpty()) {
            return List.of();
        }
        // a holder whose fast-tier version has another key is superseded; one whose fast-tier version still has
        // the key was removed since this transaction's snapshot (its index entry gone): it counts, as one absent
        Set<BsonValue> superseded = new java.util.HashSet<>(TierQueries.idsIn(fast, session, namespace, inArchive));
        superseded.removeAll(TierQueries.idsMatching(
                fast,
                session,
                namespace,
                new BsonDocument(
                        "$and",
                        new org.bson.BsonArray(List.of(
                                new BsonDocument("_id", new BsonDocument("$in", new org.bson.BsonArray(inArchive))),
                                filter.get()))),
                null,
                0));
        List<BsonValue> holders = new ArrayList<>(inArchive);
        holders.removeAll(superseded);
        // a document a user deleted holds no key, though the archive keeps it until the feeder mirrors the delete
        fences.read(session, namespace, holders).forEach((id, fence) -> {
            if (fence.kind() == Fence.Kind.USER_DELETE) {
                holders.remove(id);
            }
        });
        return holders;
    }
}
