package io.thermocline.proxy.tiered.writes;

import com.mongodb.client.model.Collation;
import com.mongodb.client.model.CollationAlternate;
import com.mongodb.client.model.CollationCaseFirst;
import com.mongodb.client.model.CollationMaxVariable;
import com.mongodb.client.model.CollationStrength;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** The parts of a write statement the write path reads, and its filter narrowed to resolved targets. */
final class Statements {

    private Statements() {
    }

    /** {@code filter} restricted to one resolved {@code _id}. */
    static BsonDocument restricted(BsonDocument filter, BsonValue id) {
        return new BsonDocument("$and", new BsonArray(List.of(filter, new BsonDocument("_id", id))));
    }

    /** {@code filter} restricted to resolved {@code _id}s. */
    static BsonDocument restricted(BsonDocument filter, List<BsonValue> ids) {
        return new BsonDocument("$and", new BsonArray(List.of(filter, new BsonDocument("_id", new BsonDocument("$in", new BsonArray(ids))))));
    }

    static BsonDocument documentOrEmpty(BsonDocument statement, String field) {
        return statement.isDocument(field) ? statement.getDocument(field) : new BsonDocument();
    }

    /** A boolean option as servers read it: {@code true} or a non-zero number. */
    static boolean flag(BsonDocument statement, String key) {
        BsonValue v = statement.get(key);
        return v != null && (v.isBoolean() ? v.asBoolean().getValue() : v.isNumber() && v.asNumber().intValue() != 0);
    }

    /**
     * The statement's collation, for every query the proxy runs to resolve its targets: under a
     * case-insensitive collation {@code {sku: "a"}} also matches {@code "A"}, as the write itself will.
     */
    static Collation collation(BsonDocument statement) {
        if (!statement.isDocument("collation")) {
            return null;
        }
        BsonDocument c = statement.getDocument("collation");
        Collation.Builder b = Collation.builder();
        if (c.isString("locale")) {
            b.locale(c.getString("locale").getValue());
        }
        if (c.isBoolean("caseLevel")) {
            b.caseLevel(c.getBoolean("caseLevel").getValue());
        }
        if (c.isString("caseFirst")) {
            b.collationCaseFirst(CollationCaseFirst.fromString(c.getString("caseFirst").getValue()));
        }
        if (c.isNumber("strength")) {
            b.collationStrength(CollationStrength.fromInt(c.getNumber("strength").intValue()));
        }
        if (c.isBoolean("numericOrdering")) {
            b.numericOrdering(c.getBoolean("numericOrdering").getValue());
        }
        if (c.isString("alternate")) {
            b.collationAlternate(CollationAlternate.fromString(c.getString("alternate").getValue()));
        }
        if (c.isString("maxVariable")) {
            b.collationMaxVariable(CollationMaxVariable.fromString(c.getString("maxVariable").getValue()));
        }
        if (c.isBoolean("normalization")) {
            b.normalization(c.getBoolean("normalization").getValue());
        }
        if (c.isBoolean("backwards")) {
            b.backwards(c.getBoolean("backwards").getValue());
        }
        return b.build();
    }
}
