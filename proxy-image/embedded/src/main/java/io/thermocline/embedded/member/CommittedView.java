package io.thermocline.embedded.member;

import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.NoopOplog;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.storage.MemberStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Serves a read outside a transaction from the committed state of a collection that open
 * transactions are changing: their uncommitted writes sit in storage (so the transaction reads
 * its own writes), and readers elsewhere must not see them, or a transaction would not be atomic.
 */
final class CommittedView {
    private CommittedView() {
    }

    /** The reply, or empty when the command is not one this view answers (the caller reads storage). */
    static Optional<BsonDocument> read(MemberStore store, String db, String lower, BsonDocument command,
                                       Map<BsonValue, BsonDocument> preImages) {
        String coll = command.getString(command.getFirstKey()).getValue();
        List<BsonDocument> pipeline = new ArrayList<>();
        switch (lower) {
            case "find" -> {
                pipeline.add(new BsonDocument("$match", command.getDocument("filter", new BsonDocument())));
                addIf(pipeline, "$sort", command.get("sort"), v -> v.isDocument() && !v.asDocument().isEmpty());
                addIf(pipeline, "$skip", command.get("skip"), v -> v.isNumber() && v.asNumber().longValue() > 0);
                BsonValue limit = command.get("limit");
                if (limit != null && limit.isNumber() && limit.asNumber().longValue() != 0) {
                    pipeline.add(new BsonDocument("$limit", new BsonInt64(Math.abs(limit.asNumber().longValue()))));
                }
                addIf(pipeline, "$project", command.get("projection"), v -> v.isDocument() && !v.asDocument().isEmpty());
            }
            case "count" -> {
                pipeline.add(new BsonDocument("$match", command.getDocument("query", new BsonDocument())));
                addIf(pipeline, "$skip", command.get("skip"), v -> v.isNumber() && v.asNumber().longValue() > 0);
                addIf(pipeline, "$limit", command.get("limit"), v -> v.isNumber() && v.asNumber().longValue() > 0);
            }
            case "aggregate" -> {
                for (BsonValue stage : command.getArray("pipeline", new BsonArray())) {
                    pipeline.add(stage.asDocument());
                }
            }
            case "distinct" -> {
                // distinct's values: one per array element, documents without the field left out
                String key = command.getString("key", new BsonString("")).getValue();
                if (key.isEmpty()) {
                    return Optional.empty();
                }
                pipeline.add(new BsonDocument("$match", command.getDocument("query", new BsonDocument())));
                pipeline.add(new BsonDocument("$project", new BsonDocument("_id", new BsonInt32(0))
                    .append("value", new BsonString("$" + key))));
                pipeline.add(new BsonDocument("$unwind", new BsonString("$value")));
                pipeline.add(new BsonDocument("$group", new BsonDocument("_id", new BsonString("$value"))));
                pipeline.add(new BsonDocument("$sort", new BsonDocument("_id", new BsonInt32(1))));
            }
            default -> {
                return Optional.empty();
            }
        }
        List<Document> stages = new ArrayList<>();
        pipeline.forEach(stage -> stages.add(BsonBridge.toBackend(stage)));
        Aggregation aggregation;
        try {
            aggregation = Aggregation.fromPipeline(stages, null, null, null, NoopOplog.get());
        } catch (RuntimeException stageNeedsStorage) {
            return Optional.empty();
        }
        List<Document> committed = new ArrayList<>();
        // Candidates come from the storage engine's own query (its _id index serves point reads);
        // the hidden documents' committed versions are added and every stage runs on the result.
        for (RawBsonDocument doc : store.find(db, coll, prefilter(lower, command), null, 0)) {
            if (!preImages.containsKey(doc.get("_id"))) {
                committed.add(BsonBridge.toBackend(doc));
            }
        }
        preImages.values().stream().filter(Objects::nonNull).forEach(d -> committed.add(BsonBridge.toBackend(d)));
        List<Document> result = aggregation.runStages(committed.stream());
        if (lower.equals("count")) {
            return Optional.of(new BsonDocument("n", new BsonInt32(result.size())).append("ok", new BsonDouble(1)));
        }
        if (lower.equals("distinct")) {
            BsonArray values = new BsonArray();
            result.forEach(d -> values.add(BsonBridge.fromBackend(d).get("_id")));
            return Optional.of(new BsonDocument("values", values).append("ok", new BsonDouble(1)));
        }
        BsonArray batch = new BsonArray();
        result.forEach(d -> batch.add(BsonBridge.fromBackend(d)));
        return Optional.of(new BsonDocument("cursor", new BsonDocument("firstBatch", batch)
            .append("id", new BsonInt64(0)).append("ns", new BsonString(db + "." + coll))).append("ok", new BsonDouble(1)));
    }

    /** Whether a document matches a write's filter; true when the filter cannot be judged here (the write then waits or conflicts). */
    static boolean matches(BsonDocument document, BsonDocument filter) {
        try {
            return new DefaultQueryMatcher().matches(BsonBridge.toBackend(document), BsonBridge.toBackend(filter));
        } catch (RuntimeException unjudged) {
            return true;
        }
    }

    private static BsonDocument prefilter(String lower, BsonDocument command) {
        return switch (lower) {
            case "find" -> command.getDocument("filter", new BsonDocument());
            case "count", "distinct" -> command.getDocument("query", new BsonDocument());
            default -> {
                BsonArray pipeline = command.getArray("pipeline", new BsonArray());
                boolean leadingMatch = !pipeline.isEmpty() && pipeline.get(0).isDocument()
                    && pipeline.get(0).asDocument().isDocument("$match");
                yield leadingMatch ? pipeline.get(0).asDocument().getDocument("$match") : new BsonDocument();
            }
        };
    }

    private static void addIf(List<BsonDocument> pipeline, String stage, BsonValue value, Predicate<BsonValue> when) {
        if (value != null && when.test(value)) {
            pipeline.add(new BsonDocument(stage, value));
        }
    }
}
