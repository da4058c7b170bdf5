package io.thermocline.proxy.tiered.exchange;

import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The namespaces an archive-routed read reads, for its read barrier: a {@code find}, {@code count},
 * {@code distinct} or {@code aggregate} on one collection reads that collection alone, unless its
 * pipeline names another one (or may: any stage that takes a {@code from} or {@code coll}, at any depth).
 * Anything else is null, which the barrier takes as "any tiered namespace". Pure.
 */
final class ReadNamespaces {

    private static final Set<String> ONE_COLLECTION = Set.of("find", "count", "distinct", "aggregate");
    /** Stages and fields through which a pipeline reads another collection. */
    private static final Set<String> OTHER_COLLECTIONS =
            Set.of("$lookup", "$graphLookup", "$unionWith", "$out", "$merge", "from", "coll", "$documents");

    private ReadNamespaces() {}

    /** {@code database}: the command's {@code $db}; null: it may read any tiered namespace. */
    static Set<String> of(String database, BsonDocument command) {
        if (command.isEmpty() || !ONE_COLLECTION.contains(command.getFirstKey())) {
            return null;
        }
        BsonValue collection = command.get(command.getFirstKey());
        if (!collection.isString() || namesAnother(command.get("pipeline"))) {
            return null;
        }
        return Set.of(database + "." + collection.asString().getValue());
    }

    private static boolean namesAnother(BsonValue value) {
        if (value == null) {
            return false;
        }
        if (value.isArray()) {
            return value.asArray().stream().anyMatch(ReadNamespaces::namesAnother);
        }
        if (value.isDocument()) {
            for (var field : value.asDocument().entrySet()) {
                if (OTHER_COLLECTIONS.contains(field.getKey()) || namesAnother(field.getValue())) {
                    return true;
                }
            }
        }
        return false;
    }
}
