package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.QueryMatcher;
import de.bwaldvogel.mongo.backend.QueryParameters;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * A query whose filter requires an _id condition, run through the _id index (as mongod's IDHACK): the candidates the
 * condition finds, then the rest of the filter matched on each.
 */
final class IdIndexScan {
    private final StoreLocks locks;

    IdIndexScan(StoreLocks locks) {
        this.locks = locks;
    }

    /** A filter split into the _id condition it requires and the rest (empty when the condition is all of it). */
    record IdRestricted(BsonDocument byId, BsonDocument rest) {}

    /**
     * The _id condition a filter requires: a top-level {@code _id} with other fields, a conjunct of a top-level
     * {@code $and} that is an _id condition alone (how the proxy restricts a chunk of a multi-document write to its
     * documents), or an {@code _id} {@code $in} list alone. The engine uses an index only for a query of that index's
     * keys alone: it scanned the whole collection for the first two, matching a 1,000-id {@code $in} list against every
     * document, and for the last it matches each document it finds against the whole list again.
     */
    static Optional<IdRestricted> idCondition(BsonDocument filter) {
        if (filter.size() > 1 && filter.containsKey("_id")) {
            // a copy that can be edited: clone() of a command's filter (a RawBsonDocument) is a RawBsonDocument too
            BsonDocument rest = new BsonDocument();
            filter.forEach(rest::append);
            rest.remove("_id");
            return Optional.of(new IdRestricted(new BsonDocument("_id", filter.get("_id")), rest));
        }
        if (filter.size() == 1 && inList(filter) != null) {
            return Optional.of(new IdRestricted(filter, new BsonDocument()));
        }
        BsonValue and = filter.get("$and");
        if (filter.size() == 1 && and != null && and.isArray()) {
            List<BsonValue> conjuncts = and.asArray().getValues();
            for (int i = 0; i < conjuncts.size(); i++) {
                BsonValue conjunct = conjuncts.get(i);
                if (conjunct.isDocument()
                        && conjunct.asDocument().size() == 1
                        && conjunct.asDocument().containsKey("_id")) {
                    BsonArray others = new BsonArray(new ArrayList<>(conjuncts));
                    others.remove(i);
                    return Optional.of(new IdRestricted(
                            conjunct.asDocument(),
                            others.isEmpty() ? new BsonDocument() : new BsonDocument("$and", others)));
                }
            }
        }
        return Optional.empty();
    }

    /** Fields of a find command that change nothing in which documents it returns, or in what order. */
    private static final Set<String> PLAIN_FIND_FIELDS = Set.of(
            "find",
            "filter",
            "limit",
            "batchSize",
            "singleBatch",
            "projection",
            "sort",
            "skip",
            "lsid",
            "txnNumber",
            "autocommit",
            "startTransaction",
            "$clusterTime",
            "readConcern",
            "$readPreference",
            "apiVersion",
            "apiStrict",
            "apiDeprecationErrors",
            "maxTimeMS",
            "comment",
            "$db");

    /**
     * The filter and limit of a find command the _id index can answer alone: an _id condition as {@link #idCondition}
     * takes it, no projection, sort or skip, no option that changes the result. Reads of the layer above (majority
     * reads of a chunk's documents by their ids) went through the engine's own find, which matches every document it
     * finds against the whole {@code $in} list.
     */
    static Optional<PlainFind> plainFind(BsonDocument command) {
        if (!PLAIN_FIND_FIELDS.containsAll(command.keySet())
                || !command.isString("find")
                || !command.isDocument("filter")
                || !emptyOrAbsent(command, "projection")
                || !emptyOrAbsent(command, "sort")
                || (command.containsKey("skip") && !isZero(command.get("skip")))) {
            return Optional.empty();
        }
        BsonValue limit = command.get("limit", new org.bson.BsonInt32(0));
        if (!limit.isNumber()
                || limit.asNumber().longValue() < 0
                || limit.asNumber().longValue() > Integer.MAX_VALUE) {
            return Optional.empty();
        }
        BsonDocument filter = command.getDocument("filter");
        return idCondition(filter)
                .map(c -> new PlainFind(command.getString("find").getValue(), filter, (int)
                        limit.asNumber().longValue()));
    }

    /** A find the _id index answers: its collection, filter and limit (0: none). */
    record PlainFind(String collection, BsonDocument filter, int limit) {}

    private static boolean emptyOrAbsent(BsonDocument command, String field) {
        BsonValue value = command.get(field);
        return value == null || (value.isDocument() && value.asDocument().isEmpty());
    }

    private static boolean isZero(BsonValue value) {
        return value.isNumber() && value.asNumber().doubleValue() == 0;
    }

    /**
     * The values of {@code {_id: {$in: [...]}}} when each is found by an equality lookup alone (no regular
     * expression, which {@code $in} matches as a pattern, and no operator document), else null.
     */
    private static BsonArray inList(BsonDocument byId) {
        BsonValue condition = byId.get("_id");
        if (condition == null
                || !condition.isDocument()
                || condition.asDocument().size() != 1
                || !condition.asDocument().isArray("$in")) {
            return null;
        }
        BsonArray values = condition.asDocument().getArray("$in");
        for (BsonValue value : values) {
            if (value.isRegularExpression()
                    || (value.isDocument()
                            && value.asDocument().keySet().stream().anyMatch(k -> k.startsWith("$")))) {
                return null;
            }
        }
        return values;
    }

    /** The documents the _id condition finds through the _id index that match the rest of the filter, at most limit. */
    List<RawBsonDocument> find(
            MongoCollection<?> coll, String database, String collection, IdRestricted filter, int limit) {
        Document rest = filter.rest().isEmpty() ? null : BsonBridge.toBackend(filter.rest());
        BsonArray in = inList(filter.byId());
        List<Document> lookups = new ArrayList<>();
        if (in != null) {
            // one index lookup per value: the engine would match every document it finds against the whole list
            for (BsonValue value : new LinkedHashSet<>(in.getValues())) {
                lookups.add(new Document("$query", BsonBridge.toBackend(new BsonDocument("_id", value))));
            }
        } else {
            lookups.add(new Document("$query", BsonBridge.toBackend(filter.byId())));
        }
        return locks.readingCollection(database, collection, () -> {
            QueryMatcher matcher = new DefaultQueryMatcher();
            List<RawBsonDocument> result = new ArrayList<>();
            Set<BsonValue> seen = new HashSet<>(); // values $in holds apart (1 and 1.0) may find one document
            for (Document lookup : lookups) {
                for (Document document : coll.handleQuery(new QueryParameters(lookup, 0, 0))) {
                    if (rest != null && !matcher.matches(document, rest)) {
                        continue;
                    }
                    RawBsonDocument found = BsonBridge.fromBackend(document);
                    if (in != null && !seen.add(found.get("_id"))) {
                        continue;
                    }
                    result.add(found);
                    if (limit > 0 && result.size() == limit) {
                        return result;
                    }
                }
            }
            return result;
        });
    }
}
