package io.thermocline.tiering.feeder;

import com.mongodb.ReadConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.BsonOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * Rebuilds what the archive missed when the change stream's history was lost (code 286), or before
 * the feeder's very first start (writes the proxy accepted before any feeder ran): the fast
 * tier is the newest version of every document it holds (user writes land there first, copies
 * never overwrite), and a user-delete fence whose document the fast tier no longer holds is a
 * delete the archive may not have seen (fences stay until the feeder mirrored them). So: every
 * fast-tier document whose archive copy is missing or different is written, and every such fenced
 * document is deleted from the archive; a version an eviction removed (its fence carries it) that the
 * archive does not hold is written. Other documents only in the archive (cold, or evicted) are left.
 *
 * <p>The caller opens a fresh change stream at a point taken before the scan, so a write racing
 * the scan is applied again after it: the result converges to the fast tier's latest state.
 */
final class Resync {

    /** What the resync changed in the archive. */
    record Result(long upserted, long deleted) {
    }

    private static final int PAGE = 500;

    private final MongoClient fast;
    private final MongoClient archive;
    private final MetadataStore store;
    private final ArchiveWriter writer;

    Resync(MongoClient fast, MongoClient archive, MetadataStore store, ArchiveWriter writer) {
        this.fast = fast;
        this.archive = archive;
        this.store = store;
        this.writer = writer;
    }

    /** @param writeTimeout the archive-write timeout to use now (also renews the caller's lease between pages) */
    Result run(List<CollectionPolicy> policies, LongSupplier writeTimeout) {
        long upserted = 0;
        long deleted = 0;
        for (CollectionPolicy policy : policies) {
            upserted += upsertDifferences(Namespace.of(policy), writeTimeout);
            upserted += restoreEvicted(Namespace.of(policy), writeTimeout);
            deleted += deleteFenced(Namespace.of(policy), writeTimeout);
        }
        return new Result(upserted, deleted);
    }

    private long upsertDifferences(Namespace namespace, LongSupplier writeTimeout) {
        // majority: sees every write committed before the caller's majority-acknowledged probe, and none that can roll back
        MongoCollection<BsonDocument> fastCollection = namespace.in(fast).withReadConcern(ReadConcern.MAJORITY);
        MongoCollection<BsonDocument> archiveCollection = namespace.in(archive);
        long written = 0;
        BsonValue last = null;
        while (true) {
            List<BsonDocument> page = Blocking.list(fastCollection.find(last == null ? new BsonDocument() : after(last))
                    .sort(Sorts.ascending("_id")).limit(PAGE));
            if (page.isEmpty()) {
                return written;
            }
            last = page.get(page.size() - 1).get("_id");
            Map<BsonValue, BsonDocument> archived = new TreeMap<>(BsonOrder.COMPARATOR);
            for (BsonDocument d : Blocking.list(archiveCollection.find(Filters.in("_id", page.stream().map(d -> d.get("_id")).toList())))) {
                archived.put(d.get("_id"), d);
            }
            List<MirrorAction> actions = new ArrayList<>();
            for (BsonDocument current : page) {
                BsonDocument copy = archived.get(current.get("_id"));
                if (copy == null || !identical(copy, current)) {
                    actions.add(new MirrorAction.Upsert(namespace, current.get("_id"), current));
                }
            }
            if (!actions.isEmpty()) {
                written += actions.size() - writer.write(namespace, actions, writeTimeout).deadLettered();
            }
        }
    }

    /**
     * An eviction no longer waits for the archive to hold the version it removed (the feeder mirrors it
     * from the fence, {@link EvictedVersions}); with the stream's history lost, the resync does: every
     * eviction-fenced version whose document the fast tier no longer holds and the archive holds differently.
     */
    private long restoreEvicted(Namespace namespace, LongSupplier writeTimeout) {
        List<BsonValue> evicted = new ArrayList<>();
        for (BsonDocument d : Blocking.list(store.collection(MetadataStore.FENCES)
                .find(Filters.and(Filters.eq("_id.ns", namespace.toString()), Filters.eq("kind", Fence.Kind.EVICTION.name()),
                        Filters.exists(Fences.EVICTED))).projection(new BsonDocument("_id", new BsonInt32(1))))) {
            evicted.add(Fence.target(d.get("_id")).documentId());
        }
        Fences fences = new Fences(store);
        long written = 0;
        for (int from = 0; from < evicted.size(); from += PAGE) {
            List<BsonValue> ids = evicted.subList(from, Math.min(evicted.size(), from + PAGE));
            Map<BsonValue, BsonDocument> versions = fences.evictedVersions(null, namespace.toString(), ids);
            for (BsonDocument d : Blocking.list(namespace.in(fast).withReadConcern(ReadConcern.MAJORITY).find(Filters.in("_id", ids))
                    .projection(new BsonDocument("_id", new BsonInt32(1))))) {
                versions.remove(d.get("_id")); // held again (copied up or re-inserted): the scan wrote it
            }
            Map<BsonValue, BsonDocument> archived = new TreeMap<>(BsonOrder.COMPARATOR);
            for (BsonDocument d : Blocking.list(namespace.in(archive).find(Filters.in("_id", List.copyOf(versions.keySet()))))) {
                archived.put(d.get("_id"), d);
            }
            List<MirrorAction> actions = new ArrayList<>();
            versions.forEach((id, version) -> {
                BsonDocument copy = archived.get(id);
                if (copy == null || !identical(copy, version)) {
                    actions.add(new MirrorAction.Upsert(namespace, id, version));
                }
            });
            if (!actions.isEmpty()) {
                written += actions.size() - writer.write(namespace, actions, writeTimeout).deadLettered();
            }
        }
        return written;
    }

    private long deleteFenced(Namespace namespace, LongSupplier writeTimeout) {
        List<BsonValue> fenced = new ArrayList<>();
        for (BsonDocument d : Blocking.list(store.collection(MetadataStore.FENCES)
                .find(Filters.and(Filters.eq("_id.ns", namespace.toString()), Filters.eq("kind", Fence.Kind.USER_DELETE.name()))))) {
            fenced.add(Fence.fromBson(d).documentId());
        }
        long deleted = 0;
        for (int from = 0; from < fenced.size(); from += PAGE) {
            List<BsonValue> ids = fenced.subList(from, Math.min(fenced.size(), from + PAGE));
            Map<BsonValue, Boolean> held = new TreeMap<>(BsonOrder.COMPARATOR);
            for (BsonDocument d : Blocking.list(namespace.in(fast).withReadConcern(ReadConcern.MAJORITY).find(Filters.in("_id", ids)).projection(new BsonDocument("_id", new BsonInt32(1))))) {
                held.put(d.get("_id"), true);
            }
            // a fenced document the fast tier holds again was re-inserted after the delete: the scan wrote it
            List<MirrorAction> actions = ids.stream().filter(id -> !held.containsKey(id))
                    .<MirrorAction>map(id -> new MirrorAction.Delete(namespace, id)).toList();
            if (!actions.isEmpty()) {
                writer.write(namespace, actions, writeTimeout);
                deleted += actions.size();
            }
        }
        return deleted;
    }

    /** Same fields, order, types and values (Java's equals ignores field order). */
    private static boolean identical(BsonDocument a, BsonDocument b) {
        return a.toJson(EXACT).equals(b.toJson(EXACT));
    }

    private static final JsonWriterSettings EXACT = JsonWriterSettings.builder().outputMode(JsonMode.EXTENDED).build();

    /** {@code _id}s after {@code last} in BSON order, across types ({@code $gt} alone stays within one type). */
    private static Bson after(BsonValue last) {
        List<BsonType> above = BsonOrder.typesRankedAbove(last.getBsonType());
        if (above.isEmpty()) {
            return Filters.gt("_id", last);
        }
        return Filters.or(Filters.gt("_id", last), new BsonDocument("_id", new BsonDocument("$type",
                new BsonArray(above.stream().map(t -> (BsonValue) new BsonInt32(t.getValue())).toList()))));
    }
}
