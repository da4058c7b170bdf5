package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.AgeValue;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;

/**
 * The heart of routing: from a query filter, the latest instant {@code X} such that every document
 * the filter can match has {@code ageField >= X}. Sound, not complete: when in doubt there is no
 * bound, which sends the query to the archive (slower, never wrong). See docs/routing.md for the rules.
 */
public final class AgeProof {

    private AgeProof() {
    }

    /**
     * The proven lower bound of the age of every document {@code filter} matches, or empty when the
     * filter does not prove one. A null filter matches everything and proves nothing.
     */
    public static Optional<Instant> lowerBound(BsonDocument filter, CollectionPolicy policy) {
        if (filter == null || policy == null) {
            return Optional.empty();
        }
        Instant best = null;
        // A filter document is a conjunction: any conjunct's bound holds, and the latest is strongest.
        for (Map.Entry<String, BsonValue> entry : filter.entrySet()) {
            Instant bound = conjunctBound(entry.getKey(), entry.getValue(), policy);
            if (bound != null && (best == null || bound.isAfter(best))) {
                best = bound;
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * The {@code _id} a filter pins the document to: {@code {_id: v}}, {@code {_id: {$eq: v}}} or
     * {@code {_id: {$in: [v]}}}, at top level, inside a top-level {@code $and} or a one-clause {@code $or},
     * with other conjuncts allowed. Empty when the
     * value is not a plain value (null, regex, array, operator document, MinKey/MaxKey, undefined).
     */
    public static Optional<BsonValue> idEquality(BsonDocument filter) {
        if (filter == null) {
            return Optional.empty();
        }
        for (Map.Entry<String, BsonValue> entry : filter.entrySet()) {
            if ("_id".equals(entry.getKey())) {
                Optional<BsonValue> id = equalityOperand(entry.getValue()).or(() -> oneElementIn(entry.getValue()))
                        .filter(AgeProof::isPlainIdValue);
                if (id.isPresent()) {
                    return id;
                }
            } else if ("$or".equals(entry.getKey()) && entry.getValue().isArray() && entry.getValue().asArray().size() == 1
                    && entry.getValue().asArray().get(0).isDocument()) {
                // a one-clause $or is that clause (the server derives an upsert's _id from it too)
                Optional<BsonValue> id = idEquality(entry.getValue().asArray().get(0).asDocument());
                if (id.isPresent()) {
                    return id;
                }
            } else if ("$and".equals(entry.getKey()) && entry.getValue().isArray()) {
                for (BsonValue conjunct : entry.getValue().asArray()) {
                    if (conjunct.isDocument()) {
                        Optional<BsonValue> id = idEquality(conjunct.asDocument());
                        if (id.isPresent()) {
                            return id;
                        }
                    }
                }
            }
        }
        return Optional.empty();
    }

    /**
     * The {@code _id} of a filter that is nothing but an {@code _id} equality (plus {@code $comment}):
     * then an empty answer from the fast tier means exactly "the fast tier does not hold it".
     */
    public static Optional<BsonValue> pureIdEquality(BsonDocument filter) {
        if (filter == null) {
            return Optional.empty();
        }
        for (String key : filter.keySet()) {
            if (!"_id".equals(key) && !"$comment".equals(key)) {
                return Optional.empty();
            }
        }
        BsonValue id = filter.get("_id");
        return id == null ? Optional.empty() : equalityOperand(id).filter(AgeProof::isPlainIdValue);
    }

    private static Instant conjunctBound(String key, BsonValue value, CollectionPolicy policy) {
        switch (key) {
            case "$and":
                return andBound(value, policy);
            case "$or":
                return orBound(value, policy);
            default:
                // $nor, $not, $expr, $where, $text, $jsonSchema, $comment, other fields: no bound.
                return key.equals(policy.ageField()) ? fieldBound(value, policy) : null;
        }
    }

    private static Instant andBound(BsonValue value, CollectionPolicy policy) {
        if (!value.isArray()) {
            return null;
        }
        Instant best = null;
        for (BsonValue conjunct : value.asArray()) {
            if (conjunct.isDocument()) {
                Instant bound = lowerBound(conjunct.asDocument(), policy).orElse(null);
                if (bound != null && (best == null || bound.isAfter(best))) {
                    best = bound;
                }
            }
        }
        return best;
    }

    private static Instant orBound(BsonValue value, CollectionPolicy policy) {
        // A disjunction is only as strong as its weakest branch, and every branch must prove one.
        if (!value.isArray() || value.asArray().isEmpty()) {
            return null;
        }
        Instant weakest = null;
        for (BsonValue branch : value.asArray()) {
            if (!branch.isDocument()) {
                return null;
            }
            Instant bound = lowerBound(branch.asDocument(), policy).orElse(null);
            if (bound == null) {
                return null;
            }
            if (weakest == null || bound.isBefore(weakest)) {
                weakest = bound;
            }
        }
        return weakest;
    }

    private static Instant fieldBound(BsonValue value, CollectionPolicy policy) {
        if (isOperatorDocument(value)) {
            Instant best = null;
            for (Map.Entry<String, BsonValue> op : value.asDocument().entrySet()) {
                Instant bound = switch (op.getKey()) {
                    // $gt X implies >= X; equality implies >= its value.
                    case "$gte", "$gt", "$eq" -> operandAge(op.getValue(), policy);
                    case "$in" -> inBound(op.getValue(), policy);
                    // $lt/$lte bound from above; $not/$ne/$nin/$exists/$type match values of any age;
                    // $elemMatch/$all are not proved (a scalar age field never matches them anyway).
                    default -> null;
                };
                if (bound != null && (best == null || bound.isAfter(best))) {
                    best = bound;
                }
            }
            return best;
        }
        return operandAge(value, policy);
    }

    private static Instant inBound(BsonValue value, CollectionPolicy policy) {
        if (!value.isArray() || value.asArray().isEmpty()) {
            return null;
        }
        Instant weakest = null;
        for (BsonValue candidate : value.asArray()) {
            Instant age = operandAge(candidate, policy);
            if (age == null) {
                return null;
            }
            if (weakest == null || age.isBefore(weakest)) {
                weakest = age;
            }
        }
        return weakest;
    }

    /**
     * The age of a comparison operand, only when MongoDB's type-bracketed comparison against it
     * matches values whose age is at least the operand's: Dates, epoch numbers, ObjectIds. Arrays,
     * documents, regexes and strings never qualify.
     */
    private static Instant operandAge(BsonValue operand, CollectionPolicy policy) {
        if (operand.isArray() || operand.isDocument() || operand.isRegularExpression()) {
            return null;
        }
        return AgeValue.of(policy, operand).filter(AgeValue::orderMatchesTime).map(AgeValue::instant).orElse(null);
    }

    private static Optional<BsonValue> equalityOperand(BsonValue value) {
        if (isOperatorDocument(value)) {
            BsonDocument ops = value.asDocument();
            return ops.size() == 1 && ops.containsKey("$eq") ? Optional.of(ops.get("$eq")) : Optional.empty();
        }
        return Optional.of(value);
    }

    /** {@code {$in: [v]}}: one element is an equality (the server derives an upsert's {@code _id} from it). */
    private static Optional<BsonValue> oneElementIn(BsonValue value) {
        if (isOperatorDocument(value) && value.asDocument().size() == 1 && value.asDocument().isArray("$in")
                && value.asDocument().getArray("$in").size() == 1) {
            return Optional.of(value.asDocument().getArray("$in").get(0));
        }
        return Optional.empty();
    }

    private static boolean isPlainIdValue(BsonValue value) {
        BsonType type = value.getBsonType();
        return type != BsonType.NULL && type != BsonType.UNDEFINED && type != BsonType.REGULAR_EXPRESSION
                && type != BsonType.ARRAY && type != BsonType.MIN_KEY && type != BsonType.MAX_KEY
                && !isOperatorDocument(value);
    }

    static boolean isOperatorDocument(BsonValue value) {
        if (!value.isDocument() || value.asDocument().isEmpty()) {
            return false;
        }
        for (String key : value.asDocument().keySet()) {
            if (!key.startsWith("$")) {
                return false;
            }
        }
        return true;
    }
}
