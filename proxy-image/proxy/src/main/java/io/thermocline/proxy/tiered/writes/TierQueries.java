package io.thermocline.proxy.tiered.writes;

import com.mongodb.MongoNamespace;
import com.mongodb.client.model.Collation;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.FindPublisher;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.reactive.Blocking;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** The reads the write path makes on one tier to decide a write: which ids exist, which match, the first match. */
public final class TierQueries {

    private TierQueries() {
    }

    public static MongoCollection<BsonDocument> collection(MongoClient tier, String namespace) {
        MongoNamespace ns = new MongoNamespace(namespace);
        return tier.getDatabase(ns.getDatabaseName()).getCollection(ns.getCollectionName(), BsonDocument.class);
    }

    /** Which of {@code ids} the tier holds ({@code session}: read inside its transaction; null: outside any). */
    public static Set<BsonValue> idsIn(MongoClient tier, ClientSession session, String namespace, List<BsonValue> ids) {
        MongoCollection<BsonDocument> c = collection(tier, namespace);
        Set<BsonValue> found = new HashSet<>();
        for (BsonValue id : idsOf(session == null ? c.find(Filters.in("_id", ids)) : c.find(session, Filters.in("_id", ids)))) {
            found.add(id);
        }
        return found;
    }

    /** The ids of documents matching {@code filter} under {@code collation} (limit 0: all). */
    static List<BsonValue> idsMatching(MongoClient tier, ClientSession session, String namespace, BsonDocument filter,
                                       Collation collation, int limit) {
        MongoCollection<BsonDocument> c = collection(tier, namespace);
        FindPublisher<BsonDocument> find = session == null ? c.find(filter) : c.find(session, filter);
        return idsOf(find.collation(collation).limit(limit));
    }

    /** The id of the first match in {@code sort} order, or null. */
    static BsonValue first(MongoClient tier, String namespace, BsonDocument filter, BsonDocument sort, Collation collation) {
        return Blocking.single(collection(tier, namespace).find(filter).sort(sort).collation(collation).limit(1)
                .projection(Projections.include("_id")).first()).map(d -> d.get("_id")).orElse(null);
    }

    /** The whole documents with these ids. */
    static List<BsonDocument> documents(MongoClient tier, String namespace, List<BsonValue> ids) {
        return Blocking.list(collection(tier, namespace).find(Filters.in("_id", ids)));
    }

    private static List<BsonValue> idsOf(FindPublisher<BsonDocument> find) {
        List<BsonValue> ids = new ArrayList<>();
        for (BsonDocument d : Blocking.list(find.projection(Projections.include("_id")))) {
            ids.add(d.get("_id"));
        }
        return ids;
    }
}
