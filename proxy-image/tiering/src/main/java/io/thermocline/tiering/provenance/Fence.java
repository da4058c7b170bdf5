package io.thermocline.tiering.provenance;

import java.time.Instant;
import java.util.Objects;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * What the fast tier remembers about a deletion of one document, in {@code thermocline.fences}:
 * a user delete (a tombstone, which the feeder mirrors as a delete to the archive) or an eviction.
 * Every deletion writes a fresh {@code deleteId}, so a copy-up can tell that a deletion happened
 * between its read of the archive and its write, and give up instead of resurrecting the document.
 */
public record Fence(String namespace, BsonValue documentId, Kind kind, ObjectId deleteId, Instant at) {

    /**
     * {@code DROP_STARTED} and {@code DROPPED} are namespace fences ({@link #namespaceId()}): a drop of the
     * collection writes one before the archive drops and one after the fast tier dropped, so a copy-up that
     * read the archive before the drop sees either in its transaction and copies nothing.
     */
    public enum Kind { USER_DELETE, EVICTION, DROP_STARTED, DROPPED }

    /** The document id of a namespace's drop fence: no document can have it (MongoDB refuses an array {@code _id}). */
    public static BsonValue namespaceId() {
        return new BsonArray();
    }

    public Fence {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(documentId, "documentId");
    }

    /** The fence's {@code _id}: field order is fixed so equality matches work. */
    public static BsonDocument key(String namespace, BsonValue documentId) {
        return new BsonDocument("ns", new BsonString(namespace)).append("id", documentId);
    }

    public BsonDocument toBson() {
        return new BsonDocument("_id", key(namespace, documentId))
                .append("kind", new BsonString(kind.name()))
                .append("deleteId", new BsonObjectId(deleteId))
                .append("at", new BsonDateTime(at.toEpochMilli()));
    }

    /**
     * A stored fence. One this version cannot read (a kind it does not know, a missing field) fails closed with
     * {@link UnreadableFence}: a deletion the proxy cannot interpret must stop the operation, never be ignored.
     */
    public static Fence fromBson(BsonDocument document) {
        String kind = document.get("kind") instanceof BsonString s ? s.getValue() : null;
        Kind known = null;
        for (Kind k : Kind.values()) {
            if (k.name().equals(kind)) {
                known = k;
            }
        }
        if (known == null || !document.isDocument("_id") || !document.getDocument("_id").isString("ns")
                || !document.getDocument("_id").containsKey("id") || !document.isObjectId("deleteId") || !document.isDateTime("at")) {
            throw new UnreadableFence(document, kind == null ? "it has no kind"
                    : known == null ? "its kind '" + kind + "' is not one this version knows " + java.util.Arrays.toString(Kind.values())
                    : "a field is missing (_id.ns, _id.id, deleteId and at are required)");
        }
        BsonDocument key = document.getDocument("_id");
        return new Fence(key.getString("ns").getValue(), key.get("id"), known, document.getObjectId("deleteId").getValue(),
                Instant.ofEpochMilli(document.getDateTime("at").getValue()));
    }

    /**
     * A claim's placeholder (see {@code Fences.claim}) left committed: it stands for no deletion at all, so readers skip
     * it. The claim removes it in its own transaction; an on-disk fast tier before the engine's key-order fix kept some.
     */
    public static boolean isLeftoverClaim(BsonDocument document) {
        return document.get("kind") instanceof BsonString s && s.getValue().equals(CLAIM_KIND);
    }

    /** The kind a claim gives a fence document it creates, removed again in the claiming transaction. */
    public static final String CLAIM_KIND = "CLAIM";

    /** A fence document this version cannot interpret; the message names it and says what to do. */
    public static final class UnreadableFence extends IllegalStateException {
        UnreadableFence(BsonDocument document, String why) {
            super("cannot read the fence " + (document.isDocument("_id") ? document.getDocument("_id").toJson() : String.valueOf(document.get("_id")))
                    + " in the fast tier's " + "thermocline.fences: " + why + "; the operation was refused rather than risk"
                    + " serving a deleted document. A newer Thermocline may have written it: run the same version on every"
                    + " proxy and worker");
        }
    }

    /** The namespace and document id a fence's {@code _id} names, or null when it is not a fence key. */
    public static Target target(BsonValue fenceId) {
        if (fenceId == null || !fenceId.isDocument()) {
            return null;
        }
        BsonDocument key = fenceId.asDocument();
        if (!key.isString("ns") || !key.containsKey("id")) {
            return null;
        }
        return new Target(key.getString("ns").getValue(), key.get("id"));
    }

    public record Target(String namespace, BsonValue documentId) {
    }
}
