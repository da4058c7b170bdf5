package io.thermocline.tiering.mode;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoWriteException;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.UpdateResult;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.config.Mode;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.conversions.Bson;

/**
 * The mode's documents on the fast tier: the mode document (compare-and-set on {@code version}), each
 * proxy's acknowledgement of the epoch it acts on ({@code thermocline.modeAcks}), the shadow evidence
 * ({@code thermocline.shadow}) and the archive follower's progress. Majority reads and writes, as every
 * shared state ({@link MetadataStore}).
 */
public final class ModeStore {

    public static final String ACKS = "modeAcks";
    public static final String SHADOW = "shadow";

    /** One proxy's acknowledgement: it acts on {@code epoch}, and nothing it began under an older one is still running. */
    public record Ack(String instance, long epoch, Instant at) {
    }

    private final MongoCollection<BsonDocument> state;
    private final MongoCollection<BsonDocument> acks;
    private final MongoCollection<BsonDocument> shadow;

    public ModeStore(MetadataStore store) {
        this.state = store.collection(MetadataStore.STATE);
        this.acks = store.collection(ACKS);
        this.shadow = store.collection(SHADOW);
    }

    public ModeDocument read() {
        return Blocking.single(state.find(Filters.eq("_id", ModeDocument.ID)).first())
                .map(ModeDocument::fromBson).orElse(ModeDocument.initial());
    }

    /** Writes {@code next} if the document is still at {@code previous}'s version; throws {@link StaleStateException} if not. */
    public ModeDocument save(ModeDocument previous, ModeDocument next) {
        ModeDocument stored = next.withVersion(previous.version() + 1);
        if (previous.version() == 0) {
            try {
                Blocking.run(state.insertOne(stored.toBson()));
                return stored;
            } catch (MongoWriteException e) {
                if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                    throw new StaleStateException("the mode document was created by another instance meanwhile");
                }
                throw e;
            }
        }
        UpdateResult result = Blocking.single(state.replaceOne(
                Filters.and(Filters.eq("_id", ModeDocument.ID), Filters.eq("version", previous.version())),
                stored.toBson(), new ReplaceOptions().upsert(false))).orElseThrow();
        if (result.getMatchedCount() != 1) {
            throw new StaleStateException("the mode document is no longer at version " + previous.version());
        }
        return stored;
    }

    /** Records a request (the CLI, the operator, a config); the controller carries it out. */
    public ModeDocument request(Mode mode, boolean override, String by) {
        for (int attempt = 0; ; attempt++) {
            ModeDocument current = read();
            try {
                return save(current, current.requesting(mode, override, by, Instant.now()));
            } catch (StaleStateException e) {
                if (attempt >= 20) {
                    throw e;
                }
            }
        }
    }

    /**
     * A process's config asks for {@code mode}: written as the request only when it differs from the last
     * config request, so a restart keeps a later CLI or operator request. No config request yet counts as
     * the default, tiered: a config without {@code mode:} (as the operator renders it) never undoes the
     * operator's {@code spec.mode}.
     */
    public void requestFromConfig(Mode mode) {
        ModeDocument current = read();
        Mode lastFromConfig = current.exists() && current.configRequest() != null ? current.configRequest() : Mode.TIERED;
        boolean sameAsLast = lastFromConfig == mode;
        if (!sameAsLast) {
            request(mode, false, "config");
        }
    }

    public void acknowledge(String instance, long epoch) {
        Blocking.run(acks.replaceOne(Filters.eq("_id", instance), new BsonDocument("_id", new BsonString(instance))
                .append("epoch", new BsonInt64(epoch)).append("at", new BsonDateTime(System.currentTimeMillis())),
                new ReplaceOptions().upsert(true)));
    }

    public List<Ack> acks() {
        return Blocking.list(acks.find()).stream().map(d -> new Ack(d.getString("_id").getValue(),
                d.getNumber("epoch").longValue(), Instant.ofEpochMilli(d.getDateTime("at").getValue()))).toList();
    }

    /**
     * Whether every proxy that acknowledged within two leases of {@code now} acknowledged {@code epoch}: the
     * fleet the mode controller waits for, and the one a proxy waits for before a new phase's writes.
     */
    public boolean fleetAcked(long epoch, Duration lease, Instant now) {
        Instant live = now.minus(lease.multipliedBy(2));
        return acks().stream().filter(a -> a.at().isAfter(live)).allMatch(a -> a.epoch() >= epoch);
    }

    /** A proxy that shut down cleanly leaves the fleet at once instead of after its lease. */
    public void leave(String instance) {
        Blocking.run(acks.deleteOne(Filters.eq("_id", instance)));
    }

    public void saveEvidence(ShadowEvidence evidence) {
        Blocking.run(shadow.replaceOne(Filters.eq("_id", evidence.id()), evidence.toBson(), new ReplaceOptions().upsert(true)));
    }

    public List<ShadowEvidence> evidence() {
        return Blocking.list(shadow.find()).stream().map(ShadowEvidence::fromBson).toList();
    }

    public FollowerState follower() {
        return Blocking.single(state.find(Filters.eq("_id", FollowerState.ID)).first())
                .map(FollowerState::fromBson).orElse(FollowerState.none());
    }

    /**
     * Takes the follower's lease for {@code instance} when nobody holds it, it expired, or {@code instance}
     * already holds it: the term grows by one (a conditional update on the term read, so of two instances
     * only one wins). Returns the document as taken (its progress is what the new holder resumes from).
     */
    public Optional<FollowerState> takeFollowerLease(String instance, Duration duration, Instant now) {
        FollowerState current = follower();
        FollowerLease held = current.lease();
        if (held != null && !held.heldBy(instance) && !held.expired(now)) {
            return Optional.empty();
        }
        FollowerLease next = new FollowerLease(instance, held == null ? 1 : held.term() + 1, now.plus(duration));
        Bson unchanged = held == null ? Filters.exists("lease.term", false) : Filters.eq("lease.term", held.term());
        try {
            UpdateResult result = Blocking.single(state.updateOne(Filters.and(Filters.eq("_id", FollowerState.ID), unchanged),
                    Updates.set("lease", next.toBson()), new UpdateOptions().upsert(held == null))).orElseThrow();
            if (result.getMatchedCount() == 0 && result.getUpsertedId() == null) {
                return Optional.empty();
            }
        } catch (MongoWriteException e) {
            if (e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY) {
                return Optional.empty(); // another instance created the document meanwhile
            }
            throw e;
        }
        return Optional.of(new FollowerState(current.origin(), current.resumeToken(), current.appliedThrough(), current.changing(),
                next, current.resync()));
    }

    /** Extends the lease of {@code held}'s term; false when another instance took it (this one is deposed). */
    public boolean renewFollowerLease(FollowerLease held, Instant until) {
        UpdateResult result = Blocking.single(state.updateOne(heldBy(held), Updates.set("lease.expiresAt", new BsonDateTime(until.toEpochMilli()))))
                .orElseThrow();
        return result.getMatchedCount() == 1;
    }

    /**
     * Writes the follower's progress if {@code held} still holds the lease, in {@code session}'s transaction when
     * given: the fence of every follower write (a deposed follower's transaction aborts here and applies nothing).
     */
    public void saveFollower(ClientSession session, FollowerLease held, FollowerState follower) {
        fenced(session, held, new BsonDocument("$set", follower.progressFields()));
    }

    /** Records a resync's start or end, under the same fence as the progress. */
    public void saveFollowerResync(ClientSession session, FollowerLease held, FollowerResync resync) {
        fenced(session, held, new BsonDocument("$set", new BsonDocument("resync", resync.toBson())));
    }

    private void fenced(ClientSession session, FollowerLease held, BsonDocument update) {
        Bson filter = heldBy(held);
        UpdateResult result = Blocking.single(session == null ? state.updateOne(filter, update) : state.updateOne(session, filter, update))
                .orElseThrow();
        if (result.getMatchedCount() != 1) {
            throw new StaleStateException("the archive follower's lease is no longer at term " + held.term() + " of " + held.owner());
        }
    }

    private static Bson heldBy(FollowerLease held) {
        return Filters.and(Filters.eq("_id", FollowerState.ID), Filters.eq("lease.owner", held.owner()), Filters.eq("lease.term", held.term()));
    }
}
