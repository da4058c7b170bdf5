package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.QueryParameters;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * A query whose filter requires an _id condition beside others, run through the _id index (as mongod's IDHACK):
 * the candidates the condition finds, then the whole filter matched on each.
 */
final class IdIndexScan {
    private final StoreLocks locks;

    IdIndexScan(StoreLocks locks) {
        this.locks = locks;
    }

    /**
     * The _id condition a filter requires beside others: a top-level {@code _id} with other fields, or a conjunct of a
     * top-level {@code $and} that is an _id condition alone (how the proxy restricts a chunk of a multi-document write
     * to its documents). The engine uses an index only for a query of that index's keys alone: it scanned the whole
     * collection for such a filter, matching a 1,000-id {@code $in} list against every document.
     */
    static Optional<BsonDocument> idCondition(BsonDocument filter) {
        if (filter.size() > 1 && filter.containsKey("_id")) {
            return Optional.of(new BsonDocument("_id", filter.get("_id")));
        }
        BsonValue and = filter.get("$and");
        if (filter.size() == 1 && and != null && and.isArray()) {
            for (BsonValue conjunct : and.asArray()) {
                if (conjunct.isDocument()
                        && conjunct.asDocument().size() == 1
                        && conjunct.asDocument().containsKey("_id")) {
                    return Optional.of(conjunct.asDocument());
                }
            }
        }
        return Optional.empty();
    }

    /** The documents the _id condition finds through the _id index that match the whole filter, at most limit. */
    List<RawBsonDocument> find(
            MongoCollection<?> coll,
            String database,
            String collection,
            BsonDocument byId,
            BsonDocument filter,
            int limit) {
        Document query = BsonBridge.toBackend(filter);
        Document candidates = new Document("$query", BsonBridge.toBackend(byId));
        return locks.readingCollection(database, collection, () -> {
            de.bwaldvogel.mongo.backend.QueryMatcher matcher = new de.bwaldvogel.mongo.backend.DefaultQueryMatcher();
            List<RawBsonDocument> result = new ArrayList<>();
            for (Document document : coll.handleQuery(new QueryParameters(candidates, 0, 0))) {
                if (matcher.matches(document, query)) {
                    result.add(BsonBridge.fromBackend(document));
                    if (limit > 0 && result.size() == limit) {
                        break;
                    }
                }
            }
            return result;
        });
    }
}
