package io.thermocline.proxy.tiered.writes;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.IndexOptions;
import com.mongodb.client.model.Indexes;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.reactivestreams.client.MongoDatabase;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.Date;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.RawBsonDocument;

/**
 * Retryable-write semantics for the writes the proxy carries out itself instead of forwarding
 * (guarded writes, deletes with tombstones, findAndModify removes), as a server keeps them: the reply
 * is recorded per ({@code lsid}, {@code txnNumber}) in the fast tier's
 * {@code thermocline.retryableReplies}, <em>inside the transaction that executes the write</em>, so the
 * record exists exactly when the write does, and every proxy replica finds it. A retry reads it first,
 * and again inside its own transaction. Two concurrent executions of one ({@code lsid},
 * {@code txnNumber}), on one replica or two, both write the record's {@code _id}: one commits, the
 * other conflicts (WriteConflict, or a duplicate key once the first committed), starts over and
 * replays the first one's reply. A retry answered from a record waits for its own write concern first, as
 * mongod's answer from its transaction table does ({@link #answered}). Writes forwarded to the fast tier keep
 * the client's lsid and txnNumber, so the fast tier deduplicates those itself. Records expire after the
 * logical session timeout (TTL index on {@code at}).
 */
public final class RetryableReplies {

    static final String COLLECTION = "retryableReplies";
    /** MongoDB's default logicalSessionTimeoutMinutes: a driver does not retry past it. */
    static final Duration KEPT = SessionKey.TIMEOUT;

    private final MongoDatabase database;
    private final MongoCollection<BsonDocument> records;
    private final WriteConcernWait waits;
    private volatile boolean ensured;

    public RetryableReplies(MetadataStore store) {
        this.database = store.database();
        this.records = store.collection(COLLECTION);
        this.waits = new WriteConcernWait(database);
    }

    /**
     * Creates the collection before the first record (implicit creation inside a transaction is refused
     * on some servers) and its TTL index; idempotent, and every replica may do it.
     */
    void ensureCollection() {
        if (!ensured) {
            expiring(database, records, COLLECTION);
            ensured = true;
        }
    }

    /** Creates {@code name} unless it exists (another replica may create it first) with its TTL index on {@code at}. */
    static void expiring(MongoDatabase database, MongoCollection<BsonDocument> collection, String name) {
        if (!Blocking.list(database.listCollectionNames()).contains(name)) {
            try {
                Blocking.run(database.createCollection(name));
            } catch (MongoCommandException e) {
                if (e.getErrorCode() != 48) { // NamespaceExists: another replica created it first
                    throw e;
                }
            }
        }
        Blocking.run(collection.createIndex(
                Indexes.ascending("at"), new IndexOptions().expireAfter(KEPT.toSeconds(), TimeUnit.SECONDS)));
    }

    /** The recorded reply of this retryable write, read outside any transaction, {@link #answered} to the retry. */
    Optional<RawBsonDocument> replay(WriteRequest x) {
        BsonDocument key = key(x);
        if (key == null) {
            return Optional.empty();
        }
        return Blocking.single(records.find(Filters.eq("_id", key)).first())
                .map(RetryableReplies::reply)
                .map(recorded -> answered(x, recorded));
    }

    /**
     * A recorded reply as the retry's answer: once the fast tier meets the retry's own write concern (the proxy's
     * floor at least), with its {@code writeConcernError} when it does not, as mongod answers a retry from its
     * transaction table. The first attempt's wait may have failed or been cut off with its connection, so the record
     * alone does not say a majority holds the write; and its wait was for the first attempt's write concern.
     */
    RawBsonDocument answered(WriteRequest x, RawBsonDocument recorded) {
        BsonDocument reply = new BsonDocument();
        recorded.forEach((k, v) -> {
            if (!k.equals("writeConcernError")) {
                reply.append(k, v);
            }
        });
        return OpMsg.raw(waits.after(ClientWriteConcern.of(x.command()), reply));
    }

    /** The same, inside the executing transaction (so a record committed since the first look is seen). */
    Optional<RawBsonDocument> replay(ClientSession session, WriteRequest x) {
        BsonDocument key = key(x);
        if (key == null) {
            return Optional.empty();
        }
        return Blocking.single(records.find(session, Filters.eq("_id", key)).first())
                .map(RetryableReplies::reply);
    }

    /**
     * Records the reply inside the transaction that executed the write. False when another execution of
     * the same write committed its record first: the caller aborts and replays that one.
     */
    boolean record(ClientSession session, WriteRequest x, BsonDocument reply) {
        BsonDocument key = key(x);
        if (key == null) {
            return true;
        }
        try {
            Blocking.run(records.insertOne(
                    session,
                    new BsonDocument("_id", key)
                            .append("reply", reply)
                            .append("at", new BsonDateTime(new Date().getTime()))));
            return true;
        } catch (MongoWriteException e) {
            if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                return false;
            }
            throw e;
        }
    }

    private static RawBsonDocument reply(BsonDocument record) {
        return OpMsg.raw(record.getDocument("reply"));
    }

    private static BsonDocument key(WriteRequest x) {
        if (!x.traits().retryableWrite() || x.session().isEmpty()) {
            return null;
        }
        return new BsonDocument("lsid", x.session().get().id())
                .append("txnNumber", new BsonInt64(x.traits().txnNumber()));
    }
}
