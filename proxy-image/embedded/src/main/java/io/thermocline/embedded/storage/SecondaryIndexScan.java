package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.QueryMatcher;
import de.bwaldvogel.mongo.bson.Document;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * A find sorted on a {@link SecondaryIndex}'s keys, answered by walking the index in the sort's order, as mongod's
 * index scan does: from the bound the filter puts on the first key ({@link KeyRange}) to its other end, each entry's
 * document matched against the whole filter, stopping once {@code skip + limit} documents matched. The engine itself
 * would read and match every document of the collection, then sort them, for every such find (the warmer's batch:
 * {@code find(window ∩ after(checkpoint)).sort({age: -1, _id: -1}).limit(500)}, all of an archive per batch).
 *
 * <p>Taken only where the walk's order is exactly the engine's sort: the sort names the index's keys, each in the
 * index's direction or each reversed, then {@code _id} in that same sense (the engine breaks ties in its storage
 * order, which no index has); the index has never held an array (a multikey index's order is not the sort's, which
 * takes an array's least or greatest element; see {@link IndexEntries#multikey}); and the filter names only the
 * index's fields and {@code _id}, with operators the matcher answers from those fields alone. Anything else, or a
 * failure of the plan, leaves the find to the engine, whose answer (and errors) the plan's must equal.
 */
final class SecondaryIndexScan {

    /** Fields of a find command the plan answers; any other (hint, min, max, collation, returnKey, ...) leaves it. */
    private static final Set<String> FIELDS = Set.of(
            "find",
            "filter",
            "sort",
            "projection",
            "skip",
            "limit",
            "batchSize",
            "singleBatch",
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

    /** Operators on a field the matcher decides from the field's value alone. */
    private static final Set<String> FIELD_OPERATORS = Set.of(
            "$eq",
            "$ne",
            "$gt",
            "$gte",
            "$lt",
            "$lte",
            "$in",
            "$nin",
            "$exists",
            "$type",
            "$not",
            "$regex",
            "$options",
            "$mod",
            "$size",
            "$all");

    /** The parts of a find command the plan uses, in the engine's document model. */
    record Request(String collection, Document filter, Document sort, Document projection, int skip, int limit) {}

    private final StoreLocks locks;
    private final AtomicLong answered = new AtomicLong();
    private final AtomicLong entriesWalked = new AtomicLong();

    SecondaryIndexScan(StoreLocks locks) {
        this.locks = locks;
    }

    /** How many finds a walk of a secondary index answered (tests check a find took the plan). */
    long answered() {
        return answered.get();
    }

    /** How many index entries the walks read (tests check a walk started at its bound). */
    long entriesWalked() {
        return entriesWalked.get();
    }

    /** The find's parts when the command alone allows the plan; whether an index fits is decided under the lock. */
    static Optional<Request> request(BsonDocument command) {
        if (!FIELDS.containsAll(command.keySet()) || !command.isString("find") || !command.isDocument("sort")) {
            return Optional.empty();
        }
        BsonDocument sort = command.getDocument("sort");
        BsonDocument filter = command.isDocument("filter") ? command.getDocument("filter") : new BsonDocument();
        if (sort.isEmpty()
                || (command.containsKey("filter") && !command.isDocument("filter"))
                || (command.containsKey("projection") && !command.isDocument("projection"))) {
            return Optional.empty();
        }
        Integer skip = count(command.get("skip"));
        Integer limit = count(command.get("limit"));
        if (skip == null || limit == null) {
            return Optional.empty();
        }
        BsonDocument projection = command.isDocument("projection") ? command.getDocument("projection") : null;
        return Optional.of(new Request(
                command.getString("find").getValue(),
                BsonBridge.toBackend(filter),
                BsonBridge.toBackend(sort),
                projection == null || projection.isEmpty() ? null : BsonBridge.toBackend(projection),
                skip,
                limit));
    }

    /** A whole non-negative number that fits an int (absent: 0), else null. */
    private static Integer count(BsonValue value) {
        if (value == null) {
            return 0;
        }
        if (!value.isNumber()) {
            return null;
        }
        double n = value.asNumber().doubleValue();
        return n >= 0 && n <= Integer.MAX_VALUE && n == Math.rint(n) ? (int) n : null;
    }

    /**
     * The documents the find returns, walked through an index that fits it; empty when none fits (the engine answers).
     * Runs under the collection's read lock, so no write moves a document in the index while it is walked.
     */
    /** Runs a step that walks the store's trees with its version kept (see {@code MemberStore.walking}). */
    interface Walking {
        <T> T run(Supplier<T> step);
    }

    Optional<List<RawBsonDocument>> find(
            MongoCollection<?> collection, String database, Request request, Walking walking) {
        if (!(collection instanceof PositionedDocuments documents) || !namesOnlyIndexableFields(request.filter())) {
            return Optional.empty();
        }
        return locks.readingCollection(
                database,
                request.collection(),
                () -> walking.run(() -> {
                    for (Index<?> index : collection.getIndexes()) {
                        if (index instanceof SecondaryIndex<?> secondary && !secondary.multikey()) {
                            Optional<Boolean> backwards = walkDirection(secondary.getKeys(), request.sort());
                            if (backwards.isPresent() && filterNamesOnly(request.filter(), fieldsOf(secondary))) {
                                Optional<List<RawBsonDocument>> found =
                                        walk(secondary, backwards.get(), documents, request);
                                found.ifPresent(f -> answered.incrementAndGet());
                                return found;
                            }
                        }
                    }
                    return Optional.empty();
                }));
    }

    private static Set<String> fieldsOf(SecondaryIndex<?> index) {
        Set<String> fields = new java.util.HashSet<>(index.fields());
        fields.add("_id");
        return fields;
    }

    /**
     * Whether walking the index gives the sort: forwards (false) when the sort is its keys in their directions then
     * {@code _id} ascending, backwards (true) when every direction is reversed; empty otherwise.
     */
    static Optional<Boolean> walkDirection(List<IndexKey> keys, Document sort) {
        List<String> names = new ArrayList<>(sort.keySet());
        boolean endsWithId = keys.get(keys.size() - 1).getKey().equals("_id");
        if (names.size() != keys.size() + (endsWithId ? 0 : 1)) {
            return Optional.empty();
        }
        Boolean backwards = null;
        for (int i = 0; i < names.size(); i++) {
            boolean isKey = i < keys.size();
            String expected = isKey ? keys.get(i).getKey() : "_id";
            boolean ascendingInIndex = !isKey || keys.get(i).isAscending();
            Object direction = sort.get(names.get(i));
            if (!names.get(i).equals(expected) || !(direction instanceof Number n) || Math.abs(n.doubleValue()) != 1) {
                return Optional.empty();
            }
            boolean reversed = (n.doubleValue() > 0) != ascendingInIndex;
            if (backwards != null && backwards != reversed) {
                return Optional.empty();
            }
            backwards = reversed;
        }
        return Optional.of(backwards);
    }

    /** No operator that reads beyond the fields it names ($expr, $where, $text, $jsonSchema, $elemMatch, ...). */
    private static boolean namesOnlyIndexableFields(Document filter) {
        return filterNamesOnly(filter, null);
    }

    /** Whether the filter's conditions are of the kinds above, on the given fields only (null: any field). */
    static boolean filterNamesOnly(Document filter, Set<String> fields) {
        for (Map.Entry<String, Object> condition : filter.entrySet()) {
            String key = condition.getKey();
            Object value = condition.getValue();
            if (key.equals("$and") || key.equals("$or") || key.equals("$nor")) {
                if (!(value instanceof List<?> clauses) || clauses.isEmpty()) {
                    return false;
                }
                for (Object clause : clauses) {
                    if (!(clause instanceof Document d) || !filterNamesOnly(d, fields)) {
                        return false;
                    }
                }
            } else if (key.startsWith("$") || (fields != null && !fields.contains(key)) || !fieldCondition(value)) {
                return false;
            }
        }
        return true;
    }

    private static boolean fieldCondition(Object value) {
        if (!(value instanceof Document operators)
                || operators.keySet().stream().noneMatch(k -> k.startsWith("$"))) {
            return true; // equality with a value
        }
        for (Map.Entry<String, Object> operator : operators.entrySet()) {
            if (!FIELD_OPERATORS.contains(operator.getKey())) {
                return false;
            }
            if (operator.getKey().equals("$not") && !fieldCondition(operator.getValue())) {
                return false;
            }
        }
        return true;
    }

    private Optional<List<RawBsonDocument>> walk(
            SecondaryIndex<?> index, boolean backwards, PositionedDocuments documents, Request request) {
        KeyRange range = KeyRange.of(request.filter(), index.fields().get(0));
        List<RawBsonDocument> result = new ArrayList<>();
        if (range.empty()) {
            return Optional.of(result);
        }
        // the range in value order, turned into the index's order (a descending first key stores high values first)
        boolean firstAscending = index.getKeys().get(0).isAscending();
        KeyValue start = probe(firstAscending != backwards ? range.low() : range.high());
        KeyValue end = probe(firstAscending != backwards ? range.high() : range.low());
        Iterator<? extends Map.Entry<KeyValue, ?>> entries = index.walk(start, end, backwards);
        QueryMatcher matcher = new DefaultQueryMatcher();
        int skipped = 0;
        long walked = 0;
        while (entries.hasNext()) {
            walked++;
            Document document = documents.documentAt(entries.next().getValue());
            if (document == null || !matcher.matches(document, request.filter())) {
                continue;
            }
            if (skipped < request.skip()) {
                skipped++;
                continue;
            }
            result.add(BsonBridge.fromBackend(
                    request.projection() == null ? document : project(request.projection(), document)));
            if (request.limit() > 0 && result.size() == request.limit()) {
                break;
            }
        }
        entriesWalked.addAndGet(walked);
        return Optional.of(result);
    }

    private static KeyValue probe(IndexKeyOrder.Seek bound) {
        return bound == null ? null : new KeyValue(bound);
    }

    /**
     * The engine's find projection, which mongo-java-server 1.47 keeps package-private: a result must be projected
     * exactly as the engine's own find projects it (the order of fields, the implied {@code _id}, {@code $slice}).
     */
    private static final MethodHandle NEW_PROJECTION;

    private static final MethodHandle PROJECT;

    static {
        try {
            Class<?> projection = Class.forName("de.bwaldvogel.mongo.backend.Projection");
            var constructor = projection.getDeclaredConstructor(Document.class, String.class);
            constructor.setAccessible(true);
            var method = projection.getDeclaredMethod("projectDocument", Document.class);
            method.setAccessible(true);
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            NEW_PROJECTION = lookup.unreflectConstructor(constructor)
                    .asType(MethodType.methodType(Object.class, Document.class, String.class));
            PROJECT = lookup.unreflect(method)
                    .asType(MethodType.methodType(Document.class, Object.class, Document.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static Document project(Document fields, Document document) {
        try {
            Object projection = (Object) NEW_PROJECTION.invokeExact(fields, "_id");
            return (Document) PROJECT.invokeExact(projection, document);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
