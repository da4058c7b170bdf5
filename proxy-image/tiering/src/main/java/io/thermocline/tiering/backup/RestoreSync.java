package io.thermocline.tiering.backup;

import com.mongodb.client.model.Filters;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.Mode;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.FeederHealth;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.metadata.StaleStateException;
import io.thermocline.tiering.mode.ModeController;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.bson.BsonTimestamp;

/**
 * Puts a tiered deployment back in step with an archive restored from a backup (docs/backup.md), in two steps
 * around the archive's own restore:
 *
 * <ol>
 * <li>{@link #hold}, before the archive is restored: the fleet enters {@code Restoring} (every proxy refuses
 *     reads and writes on tiered namespaces, retryably), every tiered namespace gets a {@code DROP_STARTED} fence
 *     (a copy-up in flight copies nothing, a new one waits at the sync barrier), and the feeder's lease is taken
 *     by the restore, so no feeder writes the archive while it is replaced (the command waits out the last
 *     holder's lease: a feeder stops writing before its lease ends);</li>
 * <li>{@link #resync}, after it: the fast tier's copies of tiered collections are deleted, the tiering metadata
 *     reset (coverage, eviction bounds and warmer checkpoints, fences, dead letters, retryable-write records,
 *     shadow evidence, feeder health), each namespace gets a fresh {@code DROPPED} fence (a copy-up that read
 *     before it skips), the feeder's checkpoint is moved to a fast-tier time after the reset with its lease free
 *     (the next feeder streams from there: nothing from before the restore is mirrored again), and the fleet
 *     enters {@code Drained} following the archive from its present. The archive then answers everything; the
 *     warmer fills the fast tier, and {@code thermocline mode tiered} cuts over as after a drain.</li>
 * </ol>
 *
 * Nothing from after the restore point can come back from the fast tier (it holds nothing and the feeder
 * mirrors only what is written after the reset), and no coverage hides a restored document (nothing is covered
 * until the warmer has copied it from the restored archive).
 */
public final class RestoreSync {

    /** The feeder lease's owner while a restore holds it. */
    public static final String HOLDER = "restore-sync";
    /** Far beyond any restore: only {@link #resync} or {@link #cancel} hands the lease back. */
    static final Duration HOLD = Duration.ofDays(30);
    /** The proxies' mode lease (TieredProxy.Options.modeLease): an acknowledgement older than this is not counted. */
    public static final Duration ACK_LEASE = Duration.ofSeconds(5);
    /** Fast-tier collection of the proxy's retryable-write replies (proxy module, RetryableReplies). */
    static final String RETRYABLE_REPLIES = "retryableReplies";

    /** What {@link #resync} did. */
    public record Result(long fastDocumentsDeleted, long fencesDeleted, BsonTimestamp feederFrom, BsonTimestamp followFrom) {
    }

    /** The fleet is not where the step needs it. */
    public static final class Refusal extends Exception {
        Refusal(String message) {
            super(message);
        }
    }

    private final MongoClient fast;
    private final MongoClient archive;
    private final List<CollectionPolicy> policies;
    private final MetadataStore store;
    private final ModeStore modes;
    private final Fences fences;
    private final Clock clock;
    private final Consumer<String> progress;

    public RestoreSync(MongoClient fast, MongoClient archive, List<CollectionPolicy> policies, Clock clock, Consumer<String> progress) {
        this.fast = fast;
        this.archive = archive;
        this.policies = List.copyOf(policies);
        this.store = new MetadataStore(fast);
        this.modes = new ModeStore(store);
        this.fences = new Fences(store);
        this.clock = clock;
        this.progress = progress;
    }

    /** Whether the fleet is held for a restore now. */
    public boolean held() {
        return modes.read().phase() == Phase.RESTORING;
    }

    /** Step 1, before the archive is restored. Idempotent: a second call finds the fleet held and checks the rest. */
    public void hold(Duration timeout) throws Refusal, InterruptedException {
        Instant deadline = clock.instant().plus(timeout);
        ModeDocument d = modes.read();
        if (d.phase() != Phase.RESTORING) {
            d = saveMode(m -> m.phase() == Phase.RESTORING ? m
                    : m.requesting(Mode.DRAINING, false, HOLDER, clock.instant()).entering(Mode.DRAINING, Phase.RESTORING, clock.instant()));
            progress.accept("phase Restoring (epoch " + d.epoch() + "): tiered collections refuse reads and writes, retryably");
        }
        while (!modes.fleetAcked(d.epoch(), ACK_LEASE, clock.instant())) {
            if (clock.instant().isAfter(deadline)) {
                throw new Refusal("not every proxy acknowledged phase Restoring within the timeout (thermocline status names the"
                        + " mode; a proxy that cannot read it refuses by itself after " + ACK_LEASE.toSeconds() + " s): do not restore"
                        + " the archive yet; run the command again");
            }
            Thread.sleep(100);
        }
        for (CollectionPolicy p : policies) {
            Fence fence = fences.read(null, p.namespace(), List.of(Fence.namespaceId())).get(Fence.namespaceId());
            if (fence == null || fence.kind() != Fence.Kind.DROP_STARTED) {
                fences.writeDrop(p.namespace(), Fence.Kind.DROP_STARTED);
            }
        }
        Instant lastLease = holdFeeder();
        if (lastLease.isAfter(clock.instant())) {
            progress.accept("feeder held; waiting until the last feeder's lease ends at " + lastLease + " (it stops writing the archive before)");
            Thread.sleep(Math.max(0, Duration.between(clock.instant(), lastLease).toMillis()) + 1000);
        }
        progress.accept("held: no feeder writes the archive and no proxy serves tiered collections; restore the archive now,"
                + " then run thermocline restore-sync");
    }

    /** Takes the feeder's lease for the restore; returns when the previous holder's lease ends. */
    private Instant holdFeeder() {
        while (true) {
            FeederCheckpoint c = store.feederCheckpoint();
            if (HOLDER.equals(c.owner())) {
                return Instant.EPOCH;
            }
            try {
                store.saveFeederCheckpoint(c, new FeederCheckpoint(c.resumeToken(), c.mirroredThrough(), c.openOwnTransaction(),
                        c.mirroredEvents(), c.lagSeconds(), c.pendingEvents(), HOLDER, clock.instant().plus(HOLD), c.version()));
                return c.owner() == null ? Instant.EPOCH : c.leaseExpiresAt();
            } catch (StaleStateException e) {
                // the feeder checkpointed meanwhile: take it from its newer checkpoint
            }
        }
    }

    /** Step 2, after the archive has been restored: reset the fast tier and its metadata, then Drained. */
    public Result resync() throws Refusal {
        ModeDocument d = modes.read();
        boolean feederHeld = HOLDER.equals(store.feederCheckpoint().owner());
        if (d.phase() == Phase.DRAINED && feederHeld) {
            // a resync that died after entering Drained: only the feeder's release is left
            progress.accept("the last restore-sync reset everything and entered Drained; releasing the feeder");
            return new Result(0, 0, releaseFeeder(), d.followFrom());
        }
        if (d.phase() != Phase.RESTORING || !feederHeld) {
            throw new Refusal("the fleet is not held for a restore (phase " + d.phase().documentName() + "): run thermocline"
                    + " restore-sync --hold BEFORE restoring the archive (a feeder running meanwhile writes the fast tier's newer"
                    + " writes into the restored archive), then restore it, then run restore-sync");
        }
        long deleted = 0;
        Set<String> namespaces = new LinkedHashSet<>();
        for (CollectionPolicy p : policies) {
            namespaces.add(p.namespace());
            deleted += Blocking.single(Namespace.of(p).in(fast).deleteMany(Filters.empty())).orElseThrow().getDeletedCount();
        }
        progress.accept("deleted " + deleted + " fast-tier documents of " + namespaces.size() + " tiered collection(s)");
        // every fence but the namespaces' drop fences: those are rewritten below, so a copy-up that read before sees a new one
        long fencesDeleted = Blocking.single(store.collection(MetadataStore.FENCES).deleteMany(
                Filters.ne("_id.id", Fence.namespaceId()))).orElseThrow().getDeletedCount();
        for (String ns : namespaces) {
            fences.writeDrop(ns, Fence.Kind.DROPPED);
        }
        Blocking.run(store.collection(MetadataStore.DEAD_LETTERS).deleteMany(Filters.empty()));
        Blocking.run(store.collection(RETRYABLE_REPLIES).deleteMany(Filters.empty()));
        Blocking.run(store.collection(ModeStore.SHADOW).deleteMany(Filters.empty()));
        store.saveFeederHealth(FeederHealth.HEALTHY);
        namespaces.addAll(store.namespaces().keySet());
        for (String ns : namespaces) {
            // a new version, never a deleted document: followers compare versions, and a CAS in flight must lose
            store.updateNamespace(ns, s -> new NamespaceState(ns, null, null, null, null, s.version()));
        }
        progress.accept("reset coverage, eviction bounds, warmer checkpoints, " + fencesDeleted + " fences, dead letters and retry records");
        // Drained before the feeder's release, so a crash between the two leaves a state a rerun recognises (above)
        BsonTimestamp archiveNow = ModeController.archiveTime(archive);
        saveMode(m -> m.requesting(Mode.DRAINING, false, HOLDER, clock.instant()).entering(Mode.DRAINING, Phase.DRAINED, clock.instant())
                .withDrain(null).withFollowFrom(archiveNow));
        progress.accept("phase Drained: the restored archive answers everything, the archive follower follows it from "
                + BackupPoint.describe(archiveNow));
        return new Result(deleted, fencesDeleted, releaseFeeder(), archiveNow);
    }

    /**
     * Frees the feeder's lease with its checkpoint at a fast-tier time after the reset: the next feeder streams from there,
     * so it mirrors none of the deletes above. Since the reset only Thermocline's own writes (the follower's, marked) and
     * probes reach the fast tier: in Drained the proxies write to the archive, and copy-ups wait for the feeder.
     */
    private BsonTimestamp releaseFeeder() {
        BsonTimestamp from = new MirrorBarrier(fast, store, "restore-sync").probe();
        FeederCheckpoint c = store.feederCheckpoint();
        store.saveFeederCheckpoint(c, new FeederCheckpoint(null, MetadataStore.max(c.mirroredThrough(), from), null, c.mirroredEvents(),
                0, 0, null, Instant.EPOCH, c.version()));
        progress.accept("feeder released: it streams from " + BackupPoint.describe(from));
        return from;
    }

    /**
     * Gives up a hold before the archive was touched: the feeder's lease is freed (it resumes from its checkpoint),
     * the drop fences are ended, the fleet goes back to Tiered. Refused after a resync began (nothing to cancel).
     */
    public void cancel() throws Refusal {
        ModeDocument d = modes.read();
        if (d.phase() != Phase.RESTORING) {
            throw new Refusal("the fleet is not held for a restore (phase " + d.phase().documentName() + "): nothing to cancel");
        }
        FeederCheckpoint c = store.feederCheckpoint();
        if (HOLDER.equals(c.owner())) {
            store.saveFeederCheckpoint(c, new FeederCheckpoint(c.resumeToken(), c.mirroredThrough(), c.openOwnTransaction(),
                    c.mirroredEvents(), c.lagSeconds(), c.pendingEvents(), null, Instant.EPOCH, c.version()));
        }
        for (CollectionPolicy p : policies) {
            fences.writeDrop(p.namespace(), Fence.Kind.DROPPED);
        }
        saveMode(m -> m.requesting(Mode.TIERED, false, HOLDER, clock.instant()).entering(Mode.TIERED, Phase.TIERED, clock.instant()));
        progress.accept("hold cancelled: phase Tiered, the feeder resumes from its checkpoint");
    }

    /** Applies {@code step} to the mode document as it is, again when a controller or a request moved it first. */
    private ModeDocument saveMode(UnaryOperator<ModeDocument> step) {
        while (true) {
            ModeDocument now = modes.read();
            try {
                return modes.save(now, step.apply(now));
            } catch (StaleStateException e) {
                // moved meanwhile: decide again from the new version
            }
        }
    }
}
