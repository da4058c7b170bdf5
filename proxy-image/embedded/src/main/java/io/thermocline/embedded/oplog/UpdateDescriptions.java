package io.thermocline.embedded.oplog;

import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Computes a change event's updateDescription from a document's pre- and post-image, the way the
 * server reports it: dotted paths into sub-documents, appended array elements as "arr.N",
 * shortened arrays in truncatedArrays, and whole values otherwise.
 */
public final class UpdateDescriptions {
    private UpdateDescriptions() {
    }

    public static BsonDocument diff(BsonDocument before, BsonDocument after) {
        BsonDocument updated = new BsonDocument();
        BsonArray removed = new BsonArray();
        BsonArray truncated = new BsonArray();
        diffDocuments("", before, after, updated, removed, truncated);
        return new BsonDocument("updatedFields", updated).append("removedFields", removed)
            .append("truncatedArrays", truncated);
    }

    private static void diffDocuments(String prefix, BsonDocument before, BsonDocument after,
                                      BsonDocument updated, BsonArray removed, BsonArray truncated) {
        for (String key : before.keySet()) {
            if (!after.containsKey(key)) {
                removed.add(new BsonString(prefix + key));
            }
        }
        for (Map.Entry<String, BsonValue> field : after.entrySet()) {
            String path = prefix + field.getKey();
            BsonValue old = before.get(field.getKey());
            BsonValue now = field.getValue();
            if (old == null) {
                updated.put(path, now);
            } else if (old.equals(now) && old.getBsonType() == now.getBsonType()) {
                continue;
            } else if (old.isDocument() && now.isDocument()) {
                diffDocuments(path + ".", old.asDocument(), now.asDocument(), updated, removed, truncated);
            } else if (old.isArray() && now.isArray()) {
                diffArrays(path, old.asArray(), now.asArray(), updated, truncated);
            } else {
                updated.put(path, now);
            }
        }
    }

    private static void diffArrays(String path, BsonArray old, BsonArray now, BsonDocument updated, BsonArray truncated) {
        int common = Math.min(old.size(), now.size());
        for (int i = 0; i < common; i++) {
            if (!old.get(i).equals(now.get(i))) {
                updated.put(path, now);
                return;
            }
        }
        if (now.size() < old.size()) {
            truncated.add(new BsonDocument("field", new BsonString(path)).append("newSize", new BsonInt32(now.size())));
        }
        for (int i = common; i < now.size(); i++) {
            updated.put(path + "." + i, now.get(i));
        }
    }
}
