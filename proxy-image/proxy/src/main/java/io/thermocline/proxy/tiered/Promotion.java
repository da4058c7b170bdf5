package io.thermocline.proxy.tiered;

import com.mongodb.MongoNamespace;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.AgeValue;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read-through and write-through promotion: makes the fast tier hold documents the archive has, through
 * the workers' own {@link CopyUp} (marked own transaction, fences, sync barrier), so a promotion never
 * overwrites a newer fast-tier version and never resurrects a user-deleted document.
 *
 * <p>Cheap where provable: a document the fast tier holds needs nothing; one that neither tier holds
 * (checked fast tier first, then archive) needs no barrier either, because a document reaches the
 * archive only through the fast tier (inserts land there first, the evictor removes only what the
 * archive already holds), so a document missing from both is absent, not in flight.
 */
public final class Promotion {

    private static final Logger LOG = LoggerFactory.getLogger(Promotion.class);
    private static final int CHUNK = 500;

    private final MongoClient fast;
    private final MongoClient archive;
    private final CopyUp copyUp;
    private final Executor background;
    private final Clock clock;

    public Promotion(MongoClient fast, MongoClient archive, CopyUp copyUp, Executor background, Clock clock) {
        this.fast = fast;
        this.archive = archive;
        this.copyUp = copyUp;
        this.background = background;
        this.clock = clock;
    }

    /**
     * Ensures the fast tier holds the latest version of each document that exists in either tier.
     * Throws {@link TierLagging} when the feeder did not reach the copy's barrier in time.
     */
    public void ensureInFast(String namespace, List<BsonValue> ids) {
        for (int from = 0; from < ids.size(); from += CHUNK) {
            List<BsonValue> chunk = ids.subList(from, Math.min(ids.size(), from + CHUNK));
            Set<BsonValue> held = idsIn(fast, namespace, chunk);
            List<BsonValue> missing = new ArrayList<>();
            for (BsonValue id : chunk) {
                if (!held.contains(id)) {
                    missing.add(id);
                }
            }
            if (missing.isEmpty()) {
                continue;
            }
            List<BsonValue> archived = new ArrayList<>(idsIn(archive, namespace, missing));
            if (!archived.isEmpty()) {
                copy(namespace, archived);
            }
        }
    }

    /** Read-through: copies an archive hit into the fast tier in the background when it is inside the window. */
    public void promoteIfHot(CollectionPolicy policy, BsonDocument document) {
        BsonValue id = document.get("_id");
        if (id == null) {
            return;
        }
        Instant cutoff = clock.instant().minus(policy.hotWindow());
        boolean hot = AgeValue.ofDocument(policy, document).filter(AgeValue::orderMatchesTime)
                .map(age -> !age.instant().isBefore(cutoff)).orElse(false);
        if (!hot) {
            return;
        }
        background.execute(() -> {
            try {
                copy(policy.namespace(), List.of(id));
            } catch (RuntimeException e) {
                LOG.info("event=read_through_promotion_skipped ns={} error={}", policy.namespace(), e.toString());
            }
        });
    }

    private void copy(String namespace, List<BsonValue> ids) {
        CopyUp.Result result;
        try {
            result = copyUp.copy(namespace, ids);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TierLagging("interrupted while promoting documents of " + namespace);
        }
        if (result.feederBehind()) {
            throw new TierLagging("the feeder did not mirror recent fast-tier writes in time to promote " + ids.size()
                    + " document(s) of " + namespace + " from the archive; retry the operation");
        }
        if (result.count(io.thermocline.tiering.provenance.CopyUpDecision.SKIP_TOO_SLOW) > 0) {
            throw new TierLagging("promoting documents of " + namespace + " took longer than half the fence retention; retry");
        }
    }

    static Set<BsonValue> idsIn(MongoClient client, String namespace, List<BsonValue> ids) {
        Set<BsonValue> found = new HashSet<>();
        for (BsonDocument d : Blocking.list(collection(client, namespace).find(Filters.in("_id", ids)).projection(Projections.include("_id")))) {
            found.add(d.get("_id"));
        }
        return found;
    }

    static MongoCollection<BsonDocument> collection(MongoClient client, String namespace) {
        MongoNamespace ns = new MongoNamespace(namespace);
        return client.getDatabase(ns.getDatabaseName()).getCollection(ns.getCollectionName(), BsonDocument.class);
    }
}
