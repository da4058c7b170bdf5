package io.thermocline.tiering.provenance;

import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.MongoNamespace;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The delete path the proxy must use for a user's point delete on a tiered namespace: in ONE
 * transaction on the fast tier, write a {@link Fence.Kind#USER_DELETE} fence, then delete the
 * document. The fence's change event makes the feeder delete the document in the archive even
 * when the fast tier no longer held it (evicted a moment before), and its fresh {@code deleteId}
 * stops any copy-up in flight from resurrecting it. Inside a user's own transaction, call
 * {@link #deleteInSession} with the user's session instead.
 */
public final class UserDeletes {

    private final MongoClient fast;
    private final Fences fences;

    public UserDeletes(MongoClient fast, MetadataStore store) {
        this.fast = fast;
        this.fences = new Fences(store);
    }

    /** Deletes one document as a user would; returns how many documents the fast tier held (0 or 1). */
    public long deleteOne(String namespace, BsonValue documentId) {
        for (int attempt = 1; ; attempt++) {
            ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
            try {
                session.startTransaction(TransactionOptions.builder()
                        .readConcern(ReadConcern.MAJORITY).writeConcern(WriteConcern.MAJORITY).build());
                long deleted = deleteInSession(session, namespace, documentId);
                Blocking.run(session.commitTransaction());
                return deleted;
            } catch (MongoException e) {
                if (session.hasActiveTransaction()) {
                    try {
                        Blocking.run(session.abortTransaction());
                    } catch (RuntimeException ignored) {
                        // nothing committed; the server drops the transaction
                    }
                }
                if (attempt < TransientRetry.MAX_ATTEMPTS && e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
                    TransientRetry.pause(attempt);
                    continue;
                }
                throw e;
            } finally {
                session.close();
            }
        }
    }

    /** The fence and the delete, inside a transaction the caller owns. */
    public long deleteInSession(ClientSession session, String namespace, BsonValue documentId) {
        fences.write(session, namespace, documentId, Fence.Kind.USER_DELETE);
        MongoNamespace ns = new MongoNamespace(namespace);
        MongoCollection<BsonDocument> collection = fast.getDatabase(ns.getDatabaseName())
                .getCollection(ns.getCollectionName(), BsonDocument.class);
        return Blocking.single(collection.deleteOne(session, Filters.eq("_id", documentId))).orElseThrow().getDeletedCount();
    }
}
