package io.thermocline.tiering.feeder;

import com.mongodb.MongoException;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.BsonOrder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.conversions.Bson;

/**
 * Change events over the server's 16 MB limit (a large document's update carries it twice: in
 * {@code updateDescription} and in the looked-up {@code fullDocument}). The server fails the stream
 * at such an event (BSONObjectTooLarge, 10334), and every resume meets it again. The feeder then
 * streams without the large fields ({@code $project} them out, no server lookup) and looks each
 * document up by {@code _id} itself, until it is past the event. That works on every MongoDB
 * version the project targets; {@code $changeStreamSplitLargeEvent} (7.0+, 6.0.9+) would avoid the
 * extra reads but needs fragment reassembly and is not used.
 *
 * <p>A lookup shows the document as it is now, never older than the event: the same reasoning as
 * {@code updateLookup} (later events of the document follow and end at its latest state).
 */
final class LargeEvents {

    private static final Set<String> WITH_DOCUMENT = Set.of("insert", "replace", "update");

    private LargeEvents() {
    }

    static boolean tooLarge(MongoException error) {
        return error.getCode() == 10334;
    }

    static List<Bson> leanPipeline(Bson match) {
        return List.of(Aggregates.match(match), Aggregates.project(Projections.exclude("fullDocument", "updateDescription")));
    }

    /** The events with their documents as the fast tier holds them now (one read per namespace). */
    static List<ChangeEvent> lookUp(MongoClient fast, List<ChangeEvent> events) {
        Map<Namespace, List<BsonValue>> ids = new LinkedHashMap<>();
        for (ChangeEvent event : events) {
            if (event.namespace() != null && event.documentId() != null && WITH_DOCUMENT.contains(event.operationType())) {
                ids.computeIfAbsent(event.namespace(), ns -> new ArrayList<>()).add(event.documentId());
            }
        }
        Map<Namespace, Map<BsonValue, BsonDocument>> found = new LinkedHashMap<>();
        ids.forEach((namespace, documentIds) -> {
            Map<BsonValue, BsonDocument> byId = new TreeMap<>(BsonOrder.COMPARATOR);
            for (BsonDocument d : Blocking.list(namespace.in(fast).find(Filters.in("_id", documentIds)))) {
                byId.put(d.get("_id"), d);
            }
            found.put(namespace, byId);
        });
        List<ChangeEvent> result = new ArrayList<>(events.size());
        for (ChangeEvent event : events) {
            Map<BsonValue, BsonDocument> byId = found.get(event.namespace());
            boolean looked = byId != null && event.documentId() != null && WITH_DOCUMENT.contains(event.operationType());
            result.add(looked ? event.withFullDocument(byId.get(event.documentId())) : event);
        }
        return result;
    }
}
