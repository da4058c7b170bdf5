package io.thermocline.proxy.routing;

import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Whether an equality on {@code _id} can match only that exact value. Under a non-simple collation a
 * string compares equal to other strings ({@code "abc"} = {@code "ABC"} at strength 2), so an {@code _id}
 * containing a string no longer pins one document. Dates, numbers and ObjectIds ignore collation, which
 * is why age proofs never need this check.
 */
final class Collations {

    private Collations() {
    }

    static boolean pinsOneValue(BsonValue id, BsonDocument collation) {
        return isSimple(collation) || !containsString(id);
    }

    static boolean isSimple(BsonDocument collation) {
        if (collation == null || collation.isEmpty()) {
            return true;
        }
        BsonValue locale = collation.get("locale");
        return locale != null && locale.isString() && "simple".equals(locale.asString().getValue());
    }

    private static boolean containsString(BsonValue value) {
        if (value.isString() || value.isSymbol() || value.isJavaScript()) {
            return true;
        }
        if (value.isDocument()) {
            return value.asDocument().values().stream().anyMatch(Collations::containsString);
        }
        if (value.isArray()) {
            return value.asArray().getValues().stream().anyMatch(Collations::containsString);
        }
        return false;
    }
}
