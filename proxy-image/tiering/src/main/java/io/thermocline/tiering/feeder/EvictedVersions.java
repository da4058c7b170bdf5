package io.thermocline.tiering.feeder;

import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.provenance.Fences;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Updates whose lookup found their document evicted. The evictor deletes a document once it is as
 * checked after the sync barrier, without waiting for the archive to hold that exact version: an update
 * and its undo between the check and the delete leave the content as checked, while the undo's event may
 * reach the feeder only after the eviction, when its lookup finds nothing. The eviction fence carries the
 * removed version, and it is the document's latest state (a later write would have replaced the fence or
 * brought the document back), so such an event mirrors it. Later events of the document follow in the
 * stream and win, as with any lookup; a version from before a drop of the namespace is never restored
 * ({@link Fences#evictedVersions}).
 */
final class EvictedVersions {

    private static final Set<String> WITH_DOCUMENT = Set.of("insert", "replace", "update");

    private final Fences fences;
    private final Set<Namespace> tiered;

    EvictedVersions(Fences fences, Set<Namespace> tiered) {
        this.fences = fences;
        this.tiered = Set.copyOf(tiered);
    }

    /** The events, those that found their document gone given the version its eviction removed (one fence read per namespace). */
    List<ChangeEvent> fillIn(List<ChangeEvent> events) {
        Map<Namespace, List<BsonValue>> gone = new LinkedHashMap<>();
        for (ChangeEvent event : events) {
            if (foundNothing(event)) {
                gone.computeIfAbsent(event.namespace(), ns -> new ArrayList<>()).add(event.documentId());
            }
        }
        if (gone.isEmpty()) {
            return events;
        }
        Map<Namespace, Map<BsonValue, BsonDocument>> versions = new LinkedHashMap<>();
        gone.forEach((namespace, ids) -> versions.put(namespace, fences.evictedVersions(null, namespace.toString(), ids)));
        List<ChangeEvent> result = new ArrayList<>(events.size());
        for (ChangeEvent event : events) {
            BsonDocument evicted = foundNothing(event) ? versions.get(event.namespace()).get(event.documentId()) : null;
            result.add(evicted == null ? event : event.withFullDocument(evicted));
        }
        return result;
    }

    private boolean foundNothing(ChangeEvent event) {
        return event.fullDocument() == null && event.documentId() != null
                && WITH_DOCUMENT.contains(event.operationType()) && tiered.contains(event.namespace());
    }
}
