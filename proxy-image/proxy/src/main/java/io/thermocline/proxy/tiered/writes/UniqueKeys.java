package io.thermocline.proxy.tiered.writes;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonNull;
import org.bson.BsonValue;

/**
 * The unique secondary indexes of a tiered collection, and which other documents could hold the keys a
 * write gives its documents. Each tier's own index sees only the documents that tier holds; a document
 * only the archive holds is brought into the fast tier inside the write's guarded transaction, so the
 * fast tier's index answers the duplicate as one database would (its own E11000: code 11000, keyPattern,
 * keyValue, the index's name).
 */
final class UniqueKeys {

    /** One unique secondary index: its name, key pattern, and what limits the documents it holds. */
    record UniqueIndex(String name, BsonDocument key, boolean sparse, BsonDocument partialFilter) {

        /** From a {@code listIndexes} entry; empty for the {@code _id} index and for indexes that are not unique. */
        static Optional<UniqueIndex> of(BsonDocument spec) {
            if (!spec.getBoolean("unique", BsonBoolean.FALSE).getValue() || !spec.isDocument("key")
                    || spec.getDocument("key").keySet().equals(java.util.Set.of("_id"))) {
                return Optional.empty();
            }
            return Optional.of(new UniqueIndex(spec.getString("name", new org.bson.BsonString("")).getValue(), spec.getDocument("key"),
                    spec.getBoolean("sparse", BsonBoolean.FALSE).getValue(),
                    spec.isDocument("partialFilterExpression") ? spec.getDocument("partialFilterExpression") : null));
        }
    }

    private UniqueKeys() {
    }

    /**
     * A filter for the documents, other than {@code documents} themselves (by {@code _id}), that hold a key
     * one of {@code documents} has in one of {@code indexes}; empty when none of them is in any index. A
     * missing field is null in the key, as in the index; an array field holds each of its elements. A
     * document the partial filter leaves out may still select holders: harmless, the fast tier's index
     * then finds no duplicate.
     */
    static Optional<BsonDocument> holders(List<UniqueIndex> indexes, List<BsonDocument> documents) {
        BsonArray clauses = new BsonArray();
        BsonArray own = new BsonArray();
        for (BsonDocument document : documents) {
            if (document.containsKey("_id")) {
                own.add(document.get("_id"));
            }
            for (UniqueIndex index : indexes) {
                keyClause(index, document).ifPresent(clauses::add);
            }
        }
        if (clauses.isEmpty()) {
            return Optional.empty();
        }
        BsonDocument anyKey = clauses.size() == 1 ? clauses.get(0).asDocument() : new BsonDocument("$or", clauses);
        return Optional.of(own.isEmpty() ? anyKey
                : new BsonDocument("$and", new BsonArray(List.of(new BsonDocument("_id", new BsonDocument("$nin", own)), anyKey))));
    }

    /** The documents holding {@code document}'s key in {@code index}; empty when a sparse index leaves it out. */
    static Optional<BsonDocument> keyClause(UniqueIndex index, BsonDocument document) {
        BsonDocument clause = new BsonDocument();
        boolean anyPresent = false;
        for (String field : index.key().keySet()) {
            BsonValue value = valueAt(document, field);
            anyPresent |= value != null;
            if (value == null) {
                clause.append(field, new BsonDocument("$eq", BsonNull.VALUE));
            } else if (value.isArray()) {
                clause.append(field, new BsonDocument("$in", value.asArray()));
            } else {
                clause.append(field, new BsonDocument("$eq", value));
            }
        }
        if (!anyPresent && index.sparse()) {
            return Optional.empty();
        }
        if (index.partialFilter() != null) {
            return Optional.of(new BsonDocument("$and", new BsonArray(List.of(clause, index.partialFilter()))));
        }
        return Optional.of(clause);
    }

    /**
     * Whether an update statement ({@code u}, {@code upsert}) may give a document a key in one of {@code
     * indexes}: an upsert (it may insert), a replacement or a pipeline (any field), or an operator that
     * writes a path overlapping a key field.
     */
    static boolean mayChangeKey(List<UniqueIndex> indexes, BsonDocument statement) {
        if (indexes.isEmpty()) {
            return false;
        }
        BsonValue u = statement.get("u");
        if (statement.getBoolean("upsert", BsonBoolean.FALSE).getValue() || u == null || !u.isDocument()
                || u.asDocument().isEmpty() || !u.asDocument().getFirstKey().startsWith("$")) {
            return true;
        }
        for (var operator : u.asDocument().entrySet()) {
            if (!operator.getValue().isDocument()) {
                return true;
            }
            for (var written : operator.getValue().asDocument().entrySet()) {
                List<String> paths = new ArrayList<>(List.of(written.getKey()));
                if (operator.getKey().equals("$rename") && written.getValue().isString()) {
                    paths.add(written.getValue().asString().getValue());
                }
                for (String path : paths) {
                    for (UniqueIndex index : indexes) {
                        for (String field : index.key().keySet()) {
                            if (overlaps(path, field)) {
                                return true;
                            }
                        }
                    }
                }
            }
        }
        return false;
    }

    /** Whether writing {@code path} may change {@code field} (one is the other or a prefix of it; positional parts count as any). */
    static boolean overlaps(String path, String field) {
        String[] a = path.split("\\.");
        String[] b = field.split("\\.");
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            if (a[i].startsWith("$") || a[i].matches("\\d+")) {
                return true; // a positional or array-index part: the key's array may change
            }
            if (!a[i].equals(b[i])) {
                return false;
            }
        }
        return true;
    }

    /** The value at a dotted path through embedded documents, or null when absent. */
    static BsonValue valueAt(BsonDocument document, String path) {
        BsonValue current = document;
        for (String part : path.split("\\.")) {
            if (current == null || !current.isDocument()) {
                return null;
            }
            current = current.asDocument().get(part);
        }
        return current;
    }

    /** The ids of {@code documents}, in order. */
    static List<BsonValue> ids(List<BsonDocument> documents) {
        List<BsonValue> ids = new ArrayList<>();
        documents.forEach(d -> {
            if (d.containsKey("_id")) {
                ids.add(d.get("_id"));
            }
        });
        return ids;
    }
}
