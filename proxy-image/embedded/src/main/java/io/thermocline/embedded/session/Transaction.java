package io.thermocline.embedded.session;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogPosition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * A multi-document transaction: its writes are applied to the primary's storage as they come
 * (each statement under the write lock), and staged for the oplog, which receives them together at
 * commit. Abort restores the pre-images in reverse order. Its first statement takes its snapshot:
 * the primary's position then, which its reads see and its writes must not have been overtaken since.
 */
public final class Transaction {
    public enum State {
        IN_PROGRESS,
        COMMITTED,
        ABORTED
    }

    private final BsonDocument lsid;
    private final long txnNumber;
    private final int primaryIndex;
    private final long deadlineMillis;
    private final List<Change> changes = new ArrayList<>();
    /**
     * Per namespace, each document it changed with its version before the transaction (the first change's pre-image,
     * null: absent). Every read of the namespace and every check for a held document asks this, so it is kept as the
     * changes come instead of walking them (and decoding their document keys) per question.
     */
    private final Map<String, Map<BsonValue, BsonDocument>> committedVersions = new HashMap<>();

    private volatile State state = State.IN_PROGRESS;
    private volatile OplogPosition snapshot;

    Transaction(BsonDocument lsid, long txnNumber, int primaryIndex, long deadlineMillis) {
        this.lsid = lsid;
        this.txnNumber = txnNumber;
        this.primaryIndex = primaryIndex;
        this.deadlineMillis = deadlineMillis;
    }

    public BsonDocument lsid() {
        return lsid;
    }

    public long txnNumber() {
        return txnNumber;
    }

    public int primaryIndex() {
        return primaryIndex;
    }

    public long deadlineMillis() {
        return deadlineMillis;
    }

    public State state() {
        return state;
    }

    void state(State value) {
        state = value;
    }

    /** The position its snapshot was taken at; null before its first statement. */
    public OplogPosition snapshot() {
        return snapshot;
    }

    void snapshot(OplogPosition value) {
        snapshot = value;
    }

    public synchronized void stage(Change change) {
        changes.add(change);
        if (change.documentKey() != null) {
            Map<BsonValue, BsonDocument> versions = committedVersions.computeIfAbsent(
                    namespace(change.database(), change.collection()), ns -> new LinkedHashMap<>());
            BsonValue id = comparable(change.documentKey().get("_id"));
            if (!versions.containsKey(id)) { // the first change's pre-image, even when null (inserted here)
                versions.put(id, change.preImage());
            }
        }
    }

    /** Whether this transaction changed the document (so others must not until it ends). */
    public synchronized boolean touches(String database, String collection, BsonValue id) {
        Map<BsonValue, BsonDocument> versions = committedVersions.get(namespace(database, collection));
        return versions != null && versions.containsKey(comparable(id));
    }

    /**
     * The documents of the collection this transaction changed, each in its version before the transaction (null:
     * absent then), in the order of their first change.
     */
    public Map<BsonValue, BsonDocument> committedVersions(String database, String collection) {
        Map<BsonValue, BsonDocument> versions = new LinkedHashMap<>();
        addCommittedVersions(database, collection, versions);
        return versions;
    }

    /**
     * Adds to {@code into} the documents of the collection this transaction changed that it does not hold yet (a
     * null version counts as held), each in its version before the transaction: what every read of the collection
     * asks, so without a copy per read.
     */
    public synchronized void addCommittedVersions(
            String database, String collection, Map<BsonValue, BsonDocument> into) {
        Map<BsonValue, BsonDocument> versions = committedVersions.get(namespace(database, collection));
        if (versions == null) {
            return;
        }
        versions.forEach((id, version) -> {
            if (!into.containsKey(id)) {
                into.put(id, version);
            }
        });
    }

    private static String namespace(String database, String collection) {
        return database + "." + collection;
    }

    /**
     * An {@code _id} as a map key: a raw document decodes itself whole at every hash and comparison, so it is decoded
     * once here (equal to the raw form either way: both hash and compare by their entries).
     */
    static BsonValue comparable(BsonValue id) {
        return id instanceof RawBsonDocument raw ? raw.decode(new BsonDocumentCodec()) : id;
    }

    public synchronized List<Change> changes() {
        return List.copyOf(changes);
    }
}
