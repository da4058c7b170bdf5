package io.thermocline.proxy.mode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Compares what the archive answered with what the fast tier answers, by {@code _id} and field, pure.
 * A divergence names the documents' ids and the dotted paths that differ, never values:
 * {@code $missing} (only the archive has it), {@code $extra} (only the fast tier), {@code $order}
 * (same documents, another order, for a sorted read).
 */
public final class ResultComparison {

    public record Outcome(boolean agreed, List<BsonValue> ids, List<String> fields) {
        static final Outcome AGREED = new Outcome(true, List.of(), List.of());
    }

    private static final int MAX_IDS = 10;

    private ResultComparison() {
    }

    public static Outcome compare(List<BsonDocument> archive, List<BsonDocument> fast, boolean ordered) {
        Map<BsonValue, BsonDocument> a = byId(archive);
        Map<BsonValue, BsonDocument> f = byId(fast);
        List<BsonValue> ids = new ArrayList<>();
        Set<String> fields = new LinkedHashSet<>();
        for (var e : a.entrySet()) {
            BsonDocument other = f.get(e.getKey());
            if (other == null) {
                note(ids, e.getKey());
                fields.add("$missing");
            } else if (!other.equals(e.getValue())) {
                note(ids, e.getKey());
                diff("", e.getValue(), other, fields);
            }
        }
        for (BsonValue id : f.keySet()) {
            if (!a.containsKey(id)) {
                note(ids, id);
                fields.add("$extra");
            }
        }
        if (ids.isEmpty() && ordered && !new ArrayList<>(a.keySet()).equals(new ArrayList<>(f.keySet()))) {
            fields.add("$order");
            ids.addAll(a.keySet().stream().limit(MAX_IDS).toList());
        }
        if (ids.isEmpty() && archive.size() != fast.size()) {
            fields.add("$count"); // duplicates or documents without _id (projections)
        }
        return fields.isEmpty() ? Outcome.AGREED : new Outcome(false, List.copyOf(ids), List.copyOf(fields));
    }

    /** Scalar results (count's {@code n}, distinct's {@code values}) compare as one field. */
    public static Outcome compareValue(String field, BsonValue archive, BsonValue fast) {
        return archive.equals(fast) ? Outcome.AGREED : new Outcome(false, List.of(), List.of(field));
    }

    private static void note(List<BsonValue> ids, BsonValue id) {
        if (ids.size() < MAX_IDS) {
            ids.add(id);
        }
    }

    private static void diff(String prefix, BsonDocument a, BsonDocument b, Set<String> fields) {
        Set<String> keys = new LinkedHashSet<>(a.keySet());
        keys.addAll(b.keySet());
        for (String key : keys) {
            BsonValue x = a.get(key);
            BsonValue y = b.get(key);
            String path = prefix.isEmpty() ? key : prefix + "." + key;
            if (x != null && y != null && x.isDocument() && y.isDocument()) {
                diff(path, x.asDocument(), y.asDocument(), fields);
            } else if (x == null || !x.equals(y)) {
                fields.add(path);
            }
        }
    }

    private static Map<BsonValue, BsonDocument> byId(List<BsonDocument> documents) {
        Map<BsonValue, BsonDocument> result = new LinkedHashMap<>();
        int i = 0;
        for (BsonDocument d : documents) {
            BsonValue id = d.get("_id");
            result.put(id == null ? new BsonString("#" + i) : id, d);
            i++;
        }
        return result;
    }
}
