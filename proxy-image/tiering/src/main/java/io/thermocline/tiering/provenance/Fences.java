package io.thermocline.tiering.provenance;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/** Reads and writes {@link Fence}s on the fast tier. */
public final class Fences {

    private final MongoCollection<BsonDocument> fences;

    public Fences(MetadataStore store) {
        this.fences = store.collection(MetadataStore.FENCES);
    }

    /** Writes a fresh fence for a deletion; call it in the same transaction as the delete itself. */
    public Fence write(ClientSession session, String namespace, BsonValue documentId, Fence.Kind kind) {
        Fence fence = new Fence(namespace, documentId, kind, new ObjectId(), Instant.now());
        Blocking.run(fences.replaceOne(session, Filters.eq("_id", Fence.key(namespace, documentId)), fence.toBson(),
                new ReplaceOptions().upsert(true)));
        return fence;
    }

    /** The current fences of the given documents (absent: never deleted, or fence expired). */
    public Map<BsonValue, Fence> read(ClientSession session, String namespace, List<BsonValue> documentIds) {
        List<BsonDocument> keys = new ArrayList<>();
        for (BsonValue id : documentIds) {
            keys.add(Fence.key(namespace, id));
        }
        Map<BsonValue, Fence> result = new HashMap<>();
        var find = session == null ? fences.find(Filters.in("_id", keys)) : fences.find(session, Filters.in("_id", keys));
        for (BsonDocument document : Blocking.list(find)) {
            Fence fence = Fence.fromBson(document);
            result.put(fence.documentId(), fence);
        }
        return result;
    }
}
