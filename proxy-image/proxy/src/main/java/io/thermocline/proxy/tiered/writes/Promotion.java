package io.thermocline.proxy.tiered.writes;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.tiered.exchange.TierLagging;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.state.AgeValue;
import io.thermocline.tiering.state.BsonOrder;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
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
 * <p>Cheap where provable: documents no fence names copy without the sync barrier (their latest versions
 * are in the archive already, docs/consistency.md "Copy-ups that skip the barrier"), so read-through
 * promotion keeps filling the fast tier while the feeder lags; a document the fast tier holds needs
 * nothing; one that neither tier holds (checked fast tier first, then archive) needs no barrier either, because a document reaches the
 * archive only through the fast tier (inserts land there first, the evictor removes only what the
 * archive already holds), so a document missing from both is absent, not in flight.
 */
public final class Promotion {

    private static final Logger LOG = LoggerFactory.getLogger(Promotion.class);
    private static final int CHUNK = 500;
    private static final int MAX_COPY_ATTEMPTS = 5;

    private final MongoClient fast;
    private final MongoClient archive;
    private final CopyUp copyUp;
    private final Fences fences;
    private final Executor background;
    private final Clock clock;
    private final Object rounds = new Object();
    private Map<String, PendingCopy> waiting = new LinkedHashMap<>(); // guarded by rounds
    private boolean copying; // a copy round runs; guarded by rounds

    public Promotion(
            MongoClient fast, MongoClient archive, CopyUp copyUp, Fences fences, Executor background, Clock clock) {
        this.fast = fast;
        this.fences = fences;
        this.archive = archive;
        this.copyUp = copyUp;
        this.background = background;
        this.clock = clock;
    }

    /**
     * Ensures the fast tier holds the latest version of each document that exists in either tier, and
     * returns the ids the fast tier held when it checked (documents in neither tier are absent from it).
     * Throws {@link TierLagging} when the feeder did not reach the copy's barrier in time. A document
     * can be evicted again right after; callers that write it check its presence in their transaction.
     */
    public Set<BsonValue> ensureInFast(String namespace, List<BsonValue> ids) {
        Set<BsonValue> present = new HashSet<>();
        for (int from = 0; from < ids.size(); from += CHUNK) {
            present.addAll(ensureChunk(namespace, ids.subList(from, Math.min(ids.size(), from + CHUNK))));
        }
        return present;
    }

    private Set<BsonValue> ensureChunk(String namespace, List<BsonValue> chunk) {
        Set<BsonValue> held = idsIn(fast, namespace, chunk);
        for (int attempt = 1; ; attempt++) {
            List<BsonValue> missing = new ArrayList<>();
            for (BsonValue id : chunk) {
                if (!held.contains(id)) {
                    missing.add(id);
                }
            }
            List<BsonValue> archived =
                    missing.isEmpty() ? List.of() : live(namespace, idsIn(archive, namespace, missing));
            if (archived.isEmpty()) {
                return held;
            }
            if (attempt > MAX_COPY_ATTEMPTS) {
                throw new TierLagging(archived.size() + " document(s) of " + namespace
                        + " kept being evicted while this operation promoted them; retry");
            }
            // a copy skips a document the evictor removed meanwhile (its fence changed): copy it again
            copy(namespace, archived);
            held.addAll(idsIn(fast, namespace, archived));
        }
    }

    /** Drops ids a user deleted (their tombstone stands until the feeder removed the archive copy). */
    private List<BsonValue> live(String namespace, Set<BsonValue> archived) {
        if (archived.isEmpty()) {
            return List.of();
        }
        List<BsonValue> ids = new ArrayList<>(archived);
        Map<BsonValue, Fence> fenced = fences.read(null, namespace, ids);
        List<BsonValue> live = new ArrayList<>();
        for (BsonValue id : ids) {
            Fence fence = fenced.get(id);
            if (fence == null || fence.kind() != Fence.Kind.USER_DELETE) {
                live.add(id);
            }
        }
        return live;
    }

    /** Read-through: copies an archive hit into the fast tier in the background when it is inside the window. */
    public void promoteIfHot(CollectionPolicy policy, BsonDocument document) {
        if (hot(policy, document)) {
            // a fenced document is left out, not waited for: it needs the feeder, and rounds run one after another
            logSkipped(
                    policy,
                    inNextRound(policy.namespace(), List.of(document.get("_id")), CopyUp.Fenced.LEAVE, null, 0));
        }
    }

    /**
     * As {@link #promoteIfHot(CollectionPolicy, BsonDocument)} for a whole document (no projection) that a read of
     * the archive's primary returned after a fence read, at {@code fencesRead} ({@link System#nanoTime}), found no
     * fence for it and no drop fence of its namespace: the copy uses it as its archive read
     * ({@link CopyUp#copyRead}), so a promotion costs the archive nothing more than the read.
     */
    public void promoteReadIfHot(CollectionPolicy policy, BsonDocument document, long fencesRead) {
        if (hot(policy, document)) {
            logSkipped(policy, inNextRound(policy.namespace(), List.of(), CopyUp.Fenced.LEAVE, document, fencesRead));
        }
    }

    private boolean hot(CollectionPolicy policy, BsonDocument document) {
        if (document.get("_id") == null) {
            return false;
        }
        Instant cutoff = clock.instant().minus(policy.hotWindow());
        return AgeValue.ofDocument(policy, document)
                .filter(AgeValue::orderMatchesTime)
                .map(age -> !age.instant().isBefore(cutoff))
                .orElse(false);
    }

    private static void logSkipped(CollectionPolicy policy, CompletableFuture<Void> round) {
        round.whenComplete((ok, e) -> {
            if (e != null) {
                LOG.info(
                        "event=read_through_promotion_skipped ns={} error={}",
                        policy.namespace(),
                        unwrap(e).toString());
            }
        });
    }

    /** Copies {@code ids} in the next copy round and waits for it; throws what the round threw. */
    private void copy(String namespace, List<BsonValue> ids) {
        try {
            inNextRound(namespace, ids, CopyUp.Fenced.WAIT, null, 0).join();
        } catch (CompletionException e) {
            throw unwrap(e) instanceof RuntimeException r ? r : e;
        }
    }

    private static Throwable unwrap(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    /**
     * Every promotion is a marked transaction of this proxy on the fast tier, and all of them bump
     * the same marker document, so concurrent ones fail each other with write conflicts (with 64
     * clients reading cold documents, most read-through promotions gave up). Promotions that
     * arrive while a copy runs therefore wait and go together in the next one: one barrier and
     * one transaction per round and namespace, whatever the number of clients.
     */
    private CompletableFuture<Void> inNextRound(
            String namespace, List<BsonValue> ids, CopyUp.Fenced fenced, BsonDocument read, long fencesRead) {
        CompletableFuture<Void> done;
        boolean startRounds;
        synchronized (rounds) {
            PendingCopy pending = waiting.computeIfAbsent(namespace, k -> new PendingCopy());
            pending.ids.addAll(ids);
            if (read != null) {
                pending.read.put(read.get("_id"), read);
                if (pending.read.size() == 1 || fencesRead - pending.readSince < 0) {
                    pending.readSince = fencesRead; // the earliest: the round's copies are timed from it
                }
            }
            if (fenced == CopyUp.Fenced.WAIT) {
                pending.fenced =
                        CopyUp.Fenced.WAIT; // one caller that needs them all makes the round wait for the fenced ones
            }
            done = pending.done;
            startRounds = !copying;
            copying = true;
        }
        if (startRounds) {
            try {
                background.execute(this::copyRounds);
            } catch (RuntimeException e) {
                failWaiting(e);
            }
        }
        return done;
    }

    private void copyRounds() {
        while (true) {
            Map<String, PendingCopy> round;
            synchronized (rounds) {
                if (waiting.isEmpty()) {
                    copying = false;
                    return;
                }
                round = waiting;
                waiting = new LinkedHashMap<>();
            }
            round.forEach((namespace, pending) -> {
                try {
                    List<BsonDocument> read = new ArrayList<>(pending.read.values());
                    for (int from = 0; from < read.size(); from += CHUNK) {
                        checked(
                                namespace,
                                copyUp.copyRead(
                                        namespace,
                                        read.subList(from, Math.min(read.size(), from + CHUNK)),
                                        pending.readSince));
                    }
                    List<BsonValue> ids = new ArrayList<>(pending.ids);
                    ids.removeIf(pending.read::containsKey);
                    for (int from = 0; from < ids.size(); from += CHUNK) {
                        copyNow(namespace, ids.subList(from, Math.min(ids.size(), from + CHUNK)), pending.fenced);
                    }
                    pending.done.complete(null);
                } catch (Throwable e) {
                    pending.done.completeExceptionally(e);
                }
            });
        }
    }

    private void failWaiting(RuntimeException e) {
        Map<String, PendingCopy> failed;
        synchronized (rounds) {
            failed = waiting;
            waiting = new LinkedHashMap<>();
            copying = false;
        }
        failed.values().forEach(p -> p.done.completeExceptionally(e));
    }

    /** Ids waiting for the next copy round of one namespace, and the round's outcome. */
    private static final class PendingCopy {
        final Set<BsonValue> ids = new LinkedHashSet<>();
        /** Documents read from the archive after an empty fence read (none of them in {@code ids}), and the earliest such read. */
        final Map<BsonValue, BsonDocument> read = new TreeMap<>(BsonOrder.COMPARATOR);

        long readSince;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        CopyUp.Fenced fenced = CopyUp.Fenced.LEAVE;
    }

    private void copyNow(String namespace, List<BsonValue> ids, CopyUp.Fenced fenced) {
        CopyUp.Result result;
        try {
            result = copyUp.copy(namespace, ids, fenced);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TierLagging("interrupted while promoting documents of " + namespace);
        }
        checked(namespace, result);
    }

    private static void checked(String namespace, CopyUp.Result result) {
        if (result.feederBehind()) {
            throw new TierLagging("the feeder did not mirror recent fast-tier writes in time to promote "
                    + result.fencedLeft() + " document(s) of " + namespace + " from the archive; retry the operation");
        }
        if (result.count(CopyUpDecision.SKIP_TOO_SLOW) > 0) {
            throw new TierLagging(
                    "promoting documents of " + namespace + " took longer than half the fence retention; retry");
        }
    }

    /** How promotions passed the sync barrier so far (unfenced documents skip it). */
    public CopyUp.BarrierCounts barrierCounts() {
        return copyUp.barrierCounts();
    }

    private static Set<BsonValue> idsIn(MongoClient client, String namespace, List<BsonValue> ids) {
        return TierQueries.idsIn(client, null, namespace, ids);
    }
}
