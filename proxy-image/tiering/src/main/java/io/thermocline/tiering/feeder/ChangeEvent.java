package io.thermocline.tiering.feeder;

import com.mongodb.client.model.changestream.ChangeStreamDocument;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.TransactionId;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The part of a change event the feeder acts on. {@code fullDocument} is the post-image for
 * inserts and replaces, the looked-up current document for updates (null when the document was
 * deleted before the lookup). {@code transaction} is set only for events of a multi-document
 * transaction.
 */
public record ChangeEvent(
        BsonDocument resumeToken,
        Namespace namespace,
        String operationType,
        BsonValue documentId,
        BsonDocument fullDocument,
        TransactionId transaction,
        BsonTimestamp clusterTime) {

    public static ChangeEvent of(ChangeStreamDocument<BsonDocument> event) {
        Namespace namespace = event.getNamespace() == null ? null
                : new Namespace(event.getNamespace().getDatabaseName(), event.getNamespace().getCollectionName());
        BsonDocument key = event.getDocumentKey();
        TransactionId transaction = event.getLsid() == null || event.getTxnNumber() == null ? null
                : new TransactionId(event.getLsid(), event.getTxnNumber().longValue());
        return new ChangeEvent(event.getResumeToken(), namespace, event.getOperationTypeString(),
                key == null ? null : key.get("_id"), event.getFullDocument(), transaction, event.getClusterTime());
    }

    /**
     * The event of an own transaction as the feeder keeps it while it waits for its batch: its position
     * in the stream and its transaction only (the planner skips it; no lookup or fence read is made for it).
     */
    public ChangeEvent positionOnly() {
        return new ChangeEvent(resumeToken, namespace, operationType, null, null, transaction, clusterTime);
    }

    /** The same event with the document as looked up now (null: the document is gone). */
    public ChangeEvent withFullDocument(BsonDocument document) {
        return new ChangeEvent(resumeToken, namespace, operationType, documentId, document, transaction, clusterTime);
    }
}
