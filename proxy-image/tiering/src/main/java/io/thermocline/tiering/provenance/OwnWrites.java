package io.thermocline.tiering.provenance;

import com.mongodb.MongoException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import java.util.Date;
import java.util.function.Function;
import org.bson.BsonDocument;

/**
 * How Thermocline marks its own writes on the fast tier (warm copies, promotions, evictions,
 * eviction fences): each runs in a transaction whose FIRST statement bumps this worker's marker
 * document in {@code thermocline.provenance}. Change events of a transaction carry its
 * {@code lsid} and {@code txnNumber}, and come in statement order, so the feeder sees the marker
 * event first and then skips every event of the same transaction ({@link OwnTransactions}).
 *
 * <p>Atomic with the data it marks (a crash can never separate marker and write), independent of
 * the driver's session pool, and a user write can never carry it: a concurrent user delete is a
 * separate transaction, so it is still mirrored.
 */
public final class OwnWrites {

    private static final int MAX_ATTEMPTS = 10;

    private final MongoClient fast;
    private final String markerId;
    private final MongoCollection<BsonDocument> provenance;

    /** {@code markerId} names the worker instance, e.g. {@code evictor/host-1}. */
    public OwnWrites(MongoClient fast, MetadataStore store, String markerId) {
        this.fast = fast;
        this.markerId = markerId;
        this.provenance = store.collection(MetadataStore.PROVENANCE);
    }

    public String markerId() {
        return markerId;
    }

    /**
     * Runs {@code body} in a marked transaction on the fast tier (majority commit), retrying the
     * whole body on transient transaction errors (write conflicts with user writes among them).
     */
    public <T> T inTransaction(Function<ClientSession, T> body) {
        for (int attempt = 1; ; attempt++) {
            ClientSession session = Blocking.single(fast.startSession()).orElseThrow();
            try {
                session.startTransaction(TransactionOptions.builder()
                        .readConcern(ReadConcern.MAJORITY)
                        .writeConcern(WriteConcern.MAJORITY)
                        .readPreference(ReadPreference.primary())
                        .build());
                Blocking.run(provenance.updateOne(session, Filters.eq("_id", markerId),
                        Updates.combine(Updates.inc("seq", 1L), Updates.set("at", new Date())),
                        new UpdateOptions().upsert(true)));
                T result = body.apply(session);
                commit(session);
                return result;
            } catch (MongoException e) {
                abortQuietly(session);
                if (attempt < TransientRetry.MAX_ATTEMPTS && e.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)) {
                    TransientRetry.pause(attempt);
                    continue;
                }
                throw e;
            } catch (RuntimeException e) {
                abortQuietly(session);
                throw e;
            } finally {
                session.close();
            }
        }
    }

    private static void commit(ClientSession session) {
        for (int attempt = 1; ; attempt++) {
            try {
                Blocking.run(session.commitTransaction());
                return;
            } catch (MongoException e) {
                if (attempt < MAX_ATTEMPTS && e.hasErrorLabel(MongoException.UNKNOWN_TRANSACTION_COMMIT_RESULT_LABEL)) {
                    continue;
                }
                throw e;
            }
        }
    }

    private static void abortQuietly(ClientSession session) {
        try {
            if (session.hasActiveTransaction()) {
                Blocking.run(session.abortTransaction());
            }
        } catch (RuntimeException ignored) {
            // the server aborts an abandoned transaction itself; nothing was committed
        }
    }
}
