package io.thermocline.tiering.feeder;

import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.TransactionId;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.OwnTransactions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * Turns a batch of change events into archive writes (pure: no I/O).
 * <ul>
 * <li>A marker event in {@code thermocline.provenance} makes its transaction Thermocline's own;
 *     every other event of that transaction is skipped (warm copies, promotions, evictions).</li>
 * <li>Inserts and replaces mirror their post-image, updates the looked-up document; an update
 *     whose lookup found nothing mirrors nothing (the delete that removed it comes later). Until that
 *     delete is applied the archive lacks the update: the plan names the earliest such event whose
 *     document is not deleted later in the same batch ({@link MirrorPlan#missingImageAt}), and
 *     {@link UnresolvedWrites} keeps mirrored-through below it.</li>
 * <li>A user fence in {@code thermocline.fences} is a user delete of the document it names, even
 *     when the fast tier no longer held that document; so is a plain delete event.</li>
 * <li>With coalescing, only the last action per document survives: the last state in the batch
 *     wins, and a delete after updates wins. Documents are told apart by MongoDB's {@code _id}
 *     equality ({@link DocumentKey}), not Java's.</li>
 * </ul>
 */
public final class BatchPlanner {

    /** The operation types that change one document, and so always carry its key. */
    private static final Set<String> DOCUMENT_EVENTS = Set.of("insert", "replace", "update", "delete");

    private static final Namespace PROVENANCE_NS = new Namespace(MetadataStore.DATABASE, MetadataStore.PROVENANCE);
    private static final Namespace FENCES_NS = new Namespace(MetadataStore.DATABASE, MetadataStore.FENCES);

    private final Set<Namespace> tieredNamespaces;
    private final boolean coalesce;

    public BatchPlanner(Set<Namespace> tieredNamespaces, boolean coalesce) {
        this.tieredNamespaces = Set.copyOf(tieredNamespaces);
        this.coalesce = coalesce;
    }

    public MirrorPlan plan(List<ChangeEvent> events, OwnTransactions own) {
        if (events.isEmpty()) {
            throw new IllegalArgumentException("a plan needs at least one event");
        }
        Map<Namespace, Map<DocumentKey, MirrorAction>> coalesced = new LinkedHashMap<>();
        Map<Namespace, List<MirrorAction>> ordered = new LinkedHashMap<>();
        int mirrored = 0;
        int replaced = 0;
        int ownEvents = 0;
        int ignored = 0;
        // per namespace and document: the earliest event whose image was missing, not yet followed by a delete
        Map<Namespace, Map<DocumentKey, BsonTimestamp>> missingImages = new LinkedHashMap<>();
        for (ChangeEvent event : events) {
            if (isOwn(event, own)) {
                ownEvents++;
                continue;
            }
            MirrorAction action = actionFor(event);
            if (action instanceof MirrorAction.Delete delete && missingImages.containsKey(delete.namespace())) {
                missingImages.get(delete.namespace()).remove(new DocumentKey(delete.documentId()));
            }
            if (action == null && missingImage(event)) {
                missingImages.computeIfAbsent(event.namespace(), ns -> new LinkedHashMap<>())
                        .putIfAbsent(new DocumentKey(event.documentId()), event.clusterTime());
            }
            if (action == null) {
                ignored++;
                continue;
            }
            mirrored++;
            if (coalesce) {
                MirrorAction previous = coalesced.computeIfAbsent(action.namespace(), ns -> new LinkedHashMap<>())
                        .put(new DocumentKey(action.documentId()), action);
                if (previous != null) {
                    replaced++;
                }
            } else {
                ordered.computeIfAbsent(action.namespace(), ns -> new ArrayList<>()).add(action);
            }
        }
        if (coalesce) {
            coalesced.forEach((ns, byId) -> ordered.put(ns, List.copyOf(byId.values())));
        }
        ChangeEvent last = events.get(events.size() - 1);
        TransactionId lastTransaction = last.transaction();
        BsonTimestamp through = lastTransaction == null ? last.clusterTime() : justBefore(last.clusterTime());
        TransactionId openOwn = lastTransaction != null && own.isOwn(lastTransaction) ? lastTransaction : null;
        BsonTimestamp missingImageAt = missingImages.values().stream().flatMap(byId -> byId.values().stream())
                .min(BsonTimestamp::compareTo).orElse(null);
        return new MirrorPlan(ordered, last.resumeToken(), through, openOwn, missingImageAt,
                new MirrorPlan.Counts(events.size(), mirrored - replaced, replaced, ownEvents, ignored));
    }

    /**
     * Whether the event belongs to one of Thermocline's own transactions: its marker (which makes the
     * transaction own, the first event of it the stream delivers) or any later event of it.
     */
    static boolean isOwn(ChangeEvent event, OwnTransactions own) {
        if (PROVENANCE_NS.equals(event.namespace()) && event.transaction() != null) {
            own.markOwn(event.transaction());
            return true;
        }
        return own.isOwn(event.transaction());
    }

    private MirrorAction actionFor(ChangeEvent event) {
        String type = event.operationType();
        if (FENCES_NS.equals(event.namespace())) {
            if (type.equals("delete")) {
                return null; // a fence expiring is not a user action
            }
            Fence.Target target = Fence.target(event.documentId());
            Namespace fenced = target == null ? null : Namespace.parse(target.namespace());
            if (fenced == null || !tieredNamespaces.contains(fenced)) {
                return null;
            }
            if (event.fullDocument() != null && event.fullDocument().isString("kind")
                    && !Fence.Kind.USER_DELETE.name().equals(event.fullDocument().getString("kind").getValue())) {
                return null; // an eviction fence outside a marked transaction is never a user delete
            }
            return new MirrorAction.Delete(fenced, target.documentId());
        }
        if (!tieredNamespaces.contains(event.namespace())) {
            return null;
        }
        if (event.documentId() == null) {
            if (!DOCUMENT_EVENTS.contains(type)) {
                return null; // drop, rename, invalidate, ...: events of the namespace, with no document to mirror
            }
            // only an own event is kept without its document (EventQueue): never skip a user write unseen
            throw new IllegalStateException("a " + type + " event on " + event.namespace()
                    + " without its document key outside an own transaction; re-reading the stream from the checkpoint");
        }
        return switch (type) {
            case "insert", "replace", "update" -> event.fullDocument() == null ? null
                    : new MirrorAction.Upsert(event.namespace(), event.documentId(), event.fullDocument());
            case "delete" -> new MirrorAction.Delete(event.namespace(), event.documentId());
            default -> null;
        };
    }

    /** A user write of one document whose state the event did not carry: its lookup found the document gone. */
    private boolean missingImage(ChangeEvent event) {
        return event.fullDocument() == null && event.documentId() != null && tieredNamespaces.contains(event.namespace())
                && Set.of("insert", "replace", "update").contains(event.operationType());
    }

    /** The greatest cluster time strictly before {@code time}. */
    static BsonTimestamp justBefore(BsonTimestamp time) {
        return io.thermocline.tiering.ClusterTimes.justBefore(time);
    }
}
