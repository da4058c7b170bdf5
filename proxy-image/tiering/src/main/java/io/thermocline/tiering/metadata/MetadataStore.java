package io.thermocline.tiering.metadata;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoWriteException;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.result.UpdateResult;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.reactivestreams.client.MongoDatabase;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The shared tiering state, in the fast tier's {@code thermocline.state} collection: one document
 * per tiered namespace ({@code ns:<db.coll>}) and one for the feeder ({@code feeder}). Every write
 * is a compare-and-set on {@code version} with majority write concern, so two instances of a worker
 * can never interleave their updates; reads use majority read concern from the primary.
 */
public final class MetadataStore {

    public static final String DATABASE = "thermocline";
    public static final String STATE = "state";
    public static final String PROVENANCE = "provenance";
    public static final String FENCES = "fences";
    public static final String PROBES = "probes";
    public static final String DEAD_LETTERS = "deadLetters";
    /** Marks of copy-ups in user-visible transactions ({@code CopyMarks}): the proxy's change streams read them, the feeder does not. */
    public static final String COPIES = "copies";
    /** The collections in {@link #DATABASE} whose change events the feeder must see. */
    public static final Set<String> WATCHED = Set.of(PROVENANCE, FENCES, PROBES);

    public static final String FEEDER_ID = "feeder";
    static final String FEEDER_HEALTH_ID = "feederHealth";
    private static final String NAMESPACE_PREFIX = "ns:";

    private final MongoDatabase database;
    private final MongoCollection<BsonDocument> state;

    public MetadataStore(MongoClient fastTier) {
        this.database = fastTier.getDatabase(DATABASE)
                .withWriteConcern(WriteConcern.MAJORITY)
                .withReadConcern(ReadConcern.MAJORITY)
                .withReadPreference(ReadPreference.primary());
        this.state = database.getCollection(STATE, BsonDocument.class);
    }

    public MongoDatabase database() {
        return database;
    }

    public MongoCollection<BsonDocument> collection(String name) {
        return database.getCollection(name, BsonDocument.class);
    }

    /**
     * Creates the metadata collections up front: implicit creation inside a transaction is not
     * allowed on every server version, and workers write them inside transactions.
     */
    public void ensureCollections() {
        List<String> existing = Blocking.list(database.listCollectionNames());
        for (String name : List.of(STATE, PROVENANCE, FENCES, PROBES, DEAD_LETTERS, COPIES)) {
            if (existing.contains(name)) {
                continue;
            }
            try {
                Blocking.run(database.createCollection(name));
            } catch (MongoCommandException e) {
                if (e.getErrorCode() != 48) { // NamespaceExists: another instance created it first
                    throw e;
                }
            }
        }
    }

    // ---- feeder ----

    public FeederCheckpoint feederCheckpoint() {
        return Blocking.single(state.find(Filters.eq("_id", FEEDER_ID)).first())
                .map(MetadataStore::toFeederCheckpoint)
                .orElse(FeederCheckpoint.initial());
    }

    /**
     * Replaces the feeder's checkpoint if nobody changed it since {@code previous} was read.
     * Mirrored-through never moves backwards: a caller passing an older time is a bug.
     */
    public FeederCheckpoint saveFeederCheckpoint(FeederCheckpoint previous, FeederCheckpoint next) {
        if (next.mirroredThrough().compareTo(previous.mirroredThrough()) < 0) {
            throw new IllegalArgumentException("mirrored-through would move backwards: "
                    + previous.mirroredThrough() + " -> " + next.mirroredThrough());
        }
        FeederCheckpoint stored = new FeederCheckpoint(next.resumeToken(), next.mirroredThrough(), next.openOwnTransaction(),
                next.mirroredEvents(), next.lagSeconds(), next.pendingEvents(), next.owner(), next.leaseExpiresAt(),
                previous.version() + 1);
        compareAndSet(FEEDER_ID, previous.version(), fromFeederCheckpoint(stored));
        return stored;
    }

    public FeederHealth feederHealth() {
        return Blocking.single(state.find(Filters.eq("_id", FEEDER_HEALTH_ID)).first())
                .map(MetadataStore::toFeederHealth)
                .orElse(FeederHealth.HEALTHY);
    }

    /** Written only by the feeder holding the lease; informational, so a plain upsert (no compare-and-set). */
    public void saveFeederHealth(FeederHealth health) {
        Blocking.run(state.replaceOne(Filters.eq("_id", FEEDER_HEALTH_ID), fromFeederHealth(health), new ReplaceOptions().upsert(true)));
    }

    // ---- namespaces ----

    public NamespaceState namespace(String namespace) {
        return Blocking.single(state.find(Filters.eq("_id", NAMESPACE_PREFIX + namespace)).first())
                .map(MetadataStore::toNamespaceState)
                .orElse(NamespaceState.initial(namespace));
    }

    public Map<String, NamespaceState> namespaces() {
        Map<String, NamespaceState> result = new LinkedHashMap<>();
        for (BsonDocument document : Blocking.list(state.find(Filters.regex("_id", "^" + NAMESPACE_PREFIX)))) {
            NamespaceState namespaceState = toNamespaceState(document);
            result.put(namespaceState.namespace(), namespaceState);
        }
        return result;
    }

    /** Writes {@code next} if the namespace's version is still the one of {@code previous}. */
    public NamespaceState saveNamespace(NamespaceState previous, NamespaceState next) {
        NamespaceState stored = new NamespaceState(next.namespace(), next.oldestCovered(), next.evictedBelow(),
                next.warmer(), next.lastEviction(), previous.version() + 1);
        compareAndSet(NAMESPACE_PREFIX + next.namespace(), previous.version(), fromNamespaceState(stored));
        return stored;
    }

    /** Read, change, conditional write; re-reads and re-applies {@code change} when it lost a race. */
    public NamespaceState updateNamespace(String namespace, UnaryOperator<NamespaceState> change) {
        for (int attempt = 0; ; attempt++) {
            NamespaceState current = namespace(namespace);
            NamespaceState next = change.apply(current);
            if (next.equals(current)) {
                return current;
            }
            try {
                return saveNamespace(current, next);
            } catch (StaleStateException e) {
                if (attempt >= 20) {
                    throw e;
                }
            }
        }
    }

    private void compareAndSet(String id, long expectedVersion, BsonDocument replacement) {
        replacement.put("_id", new BsonString(id));
        if (expectedVersion == 0) {
            try {
                Blocking.run(state.insertOne(replacement));
                return;
            } catch (MongoWriteException e) {
                if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                    throw new StaleStateException(id + " was created by another instance meanwhile");
                }
                throw e;
            }
        }
        UpdateResult result = Blocking.single(state.replaceOne(
                Filters.and(Filters.eq("_id", id), Filters.eq("version", expectedVersion)),
                replacement, new ReplaceOptions().upsert(false))).orElseThrow();
        if (result.getMatchedCount() != 1) {
            throw new StaleStateException(id + " is no longer at version " + expectedVersion + ": another instance changed it");
        }
    }

    // ---- BSON mapping ----

    static BsonDocument fromFeederCheckpoint(FeederCheckpoint c) {
        return new BsonDocument("version", new BsonInt64(c.version()))
                .append("resumeToken", c.resumeToken() == null ? BsonNull.VALUE : c.resumeToken())
                .append("mirroredThrough", c.mirroredThrough())
                .append("openOwnTransaction", c.openOwnTransaction() == null ? BsonNull.VALUE : c.openOwnTransaction().toBson())
                .append("mirroredEvents", new BsonInt64(c.mirroredEvents()))
                .append("lagSeconds", new BsonDouble(c.lagSeconds()))
                .append("pendingEvents", new BsonInt64(c.pendingEvents()))
                .append("owner", c.owner() == null ? BsonNull.VALUE : new BsonString(c.owner()))
                .append("leaseExpiresAt", date(c.leaseExpiresAt()))
                .append("updatedAt", date(Instant.now()));
    }

    static FeederCheckpoint toFeederCheckpoint(BsonDocument d) {
        return new FeederCheckpoint(
                d.isDocument("resumeToken") ? d.getDocument("resumeToken") : null,
                d.isTimestamp("mirroredThrough") ? d.getTimestamp("mirroredThrough") : FeederCheckpoint.NOTHING_MIRRORED,
                d.isDocument("openOwnTransaction") ? TransactionId.fromBson(d.getDocument("openOwnTransaction")) : null,
                d.isNumber("mirroredEvents") ? d.getNumber("mirroredEvents").longValue() : 0,
                d.isNumber("lagSeconds") ? d.getNumber("lagSeconds").doubleValue() : 0,
                d.isNumber("pendingEvents") ? d.getNumber("pendingEvents").longValue() : 0,
                d.isString("owner") ? d.getString("owner").getValue() : null,
                instant(d.get("leaseExpiresAt")) == null ? Instant.EPOCH : instant(d.get("leaseExpiresAt")),
                d.getNumber("version").longValue());
    }

    static BsonDocument fromFeederHealth(FeederHealth h) {
        FeederHealth.HistoryLoss loss = h.historyLost();
        return new BsonDocument("_id", new BsonString(FEEDER_HEALTH_ID))
                .append("deadLetters", new BsonInt64(h.deadLetters()))
                .append("oldestDeadLetter", h.oldestDeadLetter() == null ? BsonNull.VALUE : new BsonString(h.oldestDeadLetter()))
                .append("historyLost", loss == null ? BsonNull.VALUE : new BsonDocument("detectedAt", date(loss.detectedAt()))
                        .append("resyncedAt", date(loss.resyncedAt()))
                        .append("upserted", new BsonInt64(loss.upserted()))
                        .append("deleted", new BsonInt64(loss.deleted())))
                .append("archiveUnavailable", h.archiveUnavailable() == null ? BsonNull.VALUE
                        : new BsonDocument("why", new BsonString(h.archiveUnavailable().why()))
                        .append("since", date(h.archiveUnavailable().since()))
                        .append("cause", new BsonString(String.valueOf(h.archiveUnavailable().cause()))))
                .append("updatedAt", date(Instant.now()));
    }

    static FeederHealth toFeederHealth(BsonDocument d) {
        FeederHealth.HistoryLoss loss = null;
        if (d.isDocument("historyLost")) {
            BsonDocument l = d.getDocument("historyLost");
            loss = new FeederHealth.HistoryLoss(instant(l.get("detectedAt")), instant(l.get("resyncedAt")),
                    l.getNumber("upserted").longValue(), l.getNumber("deleted").longValue());
        }
        FeederHealth.ArchiveUnavailable unavailable = null;
        if (d.isDocument("archiveUnavailable")) {
            BsonDocument a = d.getDocument("archiveUnavailable");
            unavailable = new FeederHealth.ArchiveUnavailable(a.getString("why").getValue(), instant(a.get("since")),
                    a.getString("cause").getValue());
        }
        return new FeederHealth(d.isNumber("deadLetters") ? d.getNumber("deadLetters").longValue() : 0,
                d.isString("oldestDeadLetter") ? d.getString("oldestDeadLetter").getValue() : null, loss, unavailable);
    }

    static BsonDocument fromNamespaceState(NamespaceState s) {
        BsonDocument document = new BsonDocument("version", new BsonInt64(s.version()))
                .append("namespace", new BsonString(s.namespace()))
                .append("oldestCovered", date(s.oldestCovered()))
                .append("evictedBelow", date(s.evictedBelow()));
        WarmerCheckpoint w = s.warmer();
        document.append("warmer", w == null ? BsonNull.VALUE : new BsonDocument("cutoff", date(w.cutoff()))
                .append("lastAge", w.lastAge() == null ? BsonNull.VALUE : w.lastAge())
                .append("lastId", w.lastId() == null ? BsonNull.VALUE : new BsonDocument("v", w.lastId()))
                .append("complete", BsonBoolean.valueOf(w.complete()))
                .append("copied", new BsonInt64(w.copied()))
                .append("updatedAt", date(w.updatedAt())));
        EvictorPass e = s.lastEviction();
        document.append("lastEviction", e == null ? BsonNull.VALUE : new BsonDocument("completedAt", date(e.completedAt()))
                .append("cutoff", date(e.cutoff()))
                .append("evicted", new BsonInt64(e.evicted()))
                .append("keptForFeeder", new BsonInt64(e.keptForFeeder()))
                .append("keptArchiveDiffers", new BsonInt64(e.keptArchiveDiffers())));
        return document;
    }

    static NamespaceState toNamespaceState(BsonDocument d) {
        WarmerCheckpoint warmer = null;
        if (d.isDocument("warmer")) {
            BsonDocument w = d.getDocument("warmer");
            BsonValue lastAge = w.get("lastAge");
            warmer = new WarmerCheckpoint(instant(w.get("cutoff")),
                    lastAge == null || lastAge.isNull() ? null : lastAge,
                    w.isDocument("lastId") ? w.getDocument("lastId").get("v") : null,
                    w.getBoolean("complete", BsonBoolean.FALSE).getValue(),
                    w.isNumber("copied") ? w.getNumber("copied").longValue() : 0,
                    instant(w.get("updatedAt")));
        }
        EvictorPass pass = null;
        if (d.isDocument("lastEviction")) {
            BsonDocument e = d.getDocument("lastEviction");
            pass = new EvictorPass(instant(e.get("completedAt")), instant(e.get("cutoff")),
                    e.getNumber("evicted").longValue(), e.getNumber("keptForFeeder").longValue(),
                    e.getNumber("keptArchiveDiffers").longValue());
        }
        return new NamespaceState(d.getString("namespace").getValue(), instant(d.get("oldestCovered")),
                instant(d.get("evictedBelow")), warmer, pass, d.getNumber("version").longValue());
    }

    static BsonValue date(Instant instant) {
        return instant == null ? BsonNull.VALUE : new BsonDateTime(instant.toEpochMilli());
    }

    static Instant instant(BsonValue value) {
        return value != null && value.isDateTime() ? Instant.ofEpochMilli(value.asDateTime().getValue()) : null;
    }

    /** The later of two cluster times. */
    public static BsonTimestamp max(BsonTimestamp a, BsonTimestamp b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
