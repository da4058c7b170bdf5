package io.thermocline.tiering.feeder;

import io.thermocline.tiering.Namespace;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** What the feeder does to one archive document. */
public sealed interface MirrorAction {

    Namespace namespace();

    BsonValue documentId();

    /** Replace the archive's document by the full post-image, inserting it when absent. */
    record Upsert(Namespace namespace, BsonValue documentId, BsonDocument document) implements MirrorAction {
    }

    /** Delete the archive's document (a user delete). */
    record Delete(Namespace namespace, BsonValue documentId) implements MirrorAction {
    }
}
