package io.thermocline.operator.mode;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.mode.ModeStore.ModeReading;
import io.thermocline.operator.mode.ModeStore.Written;
import io.thermocline.operator.status.Observed;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;
import org.jboss.logging.Logger;

/**
 * Drives {@code spec.mode}: the operator only writes the request into the fast tier's mode document and
 * reads back what the fleet does. The transition itself (the epoch every proxy acknowledges, the cutover
 * gate, the drain) is the data plane's controller's, so no proxy ever acts on a mode the others do not.
 */
public final class ModeDriver {

    private static final Logger LOG = Logger.getLogger(ModeDriver.class);
    /** {@code status.mode.source}: spec.mode names the mode. */
    public static final String SOURCE_SPEC = "spec";
    /** {@code status.mode.source}: spec.mode is unset; the operator chose the starting mode ({@link StartingMode}). */
    public static final String SOURCE_DEFAULT = "default";

    /** The mode part of the status, its conditions, and whether a transition is under way (come back soon). */
    public record Outcome(ModeStatus status, List<Observed> conditions, boolean settling) {}

    private ModeDriver() {}

    /**
     * {@code fastTierUri} null: the fast tier cannot be addressed yet (no converged replica set, no credentials).
     * {@code archiveHoldingData}: which tiered collections hold documents in the archive (asked only to choose the
     * starting mode of a cluster without {@code spec.mode}; empty when it cannot be asked).
     */
    public static Outcome reconcile(
            KubernetesClient client,
            ThermoclineCluster cluster,
            ModeStore store,
            String fastTierUri,
            String archiveUri,
            Supplier<Optional<List<String>>> archiveHoldingData) {
        return reconcile(client, cluster, store, fastTierUri, archiveUri, archiveHoldingData, false, false);
    }

    /**
     * {@code restoreRunning}: a restore (spec.restore) owns the mode until it is done, so no request is written;
     * {@code restoreDone}: it is, and with spec.mode unset the fleet it left Drained (requested by restore-sync) is
     * cut over to tiered, as {@code restore-sync --cutover} does. While the fleet is Restoring (held by a restore,
     * whoever started it) no request is written either: only restore-sync leaves that phase.
     */
    public static Outcome reconcile(
            KubernetesClient client,
            ThermoclineCluster cluster,
            ModeStore store,
            String fastTierUri,
            String archiveUri,
            Supplier<Optional<List<String>>> archiveHoldingData,
            boolean restoreRunning,
            boolean restoreDone) {
        ModeStatus previous = cluster.getStatus() == null ? null : cluster.getStatus().mode;
        ClusterMode asked = cluster.getSpec().mode;
        if (fastTierUri == null) {
            return unobserved(
                    cluster,
                    previous,
                    "the fast tier is not ready; "
                            + (asked == null
                                    ? "spec.mode is unset: the starting mode is chosen once it is"
                                    : "mode " + asked.value() + " is requested once it is"));
        }
        Optional<ModeReading> reading = store.read(fastTierUri, archiveUri);
        if (reading.isEmpty()) {
            return unobserved(cluster, previous, "the fast tier's mode document cannot be read right now");
        }
        ModeDocument mode = reading.get().mode();
        ModeRequest request;
        String defaultReason = null;
        if (restoreRunning || ModeDocument.PHASE_RESTORING.equals(mode.phase())) {
            request = null;
            defaultReason =
                    asked != null ? null : "spec.mode is unset: the fleet keeps the mode a restore leaves it in";
        } else if (asked != null) {
            request = ModeRequest.of(cluster.getSpec());
        } else if (restoreDone
                && ModeDocument.REQUESTED_BY_RESTORE.equals(mode.requestedBy())
                && ClusterMode.DRAINING.value().equals(mode.requested())) {
            request = new ModeRequest(ClusterMode.TIERED, false, ModeRequest.BY_OPERATOR);
            defaultReason =
                    "spec.mode is unset: after a restore the fleet cuts over to tiered, as restore-sync --cutover does";
        } else if (mode.requested() == null) {
            // no mode document: this cluster starts now (a re-created resource finds its fast tier's document and keeps
            // it)
            StartingMode start = StartingMode.of(
                    cluster.getSpec().collections.stream()
                            .map(c -> c.database + "." + c.collection)
                            .toList(),
                    archiveHoldingData.get());
            request = new ModeRequest(start.mode(), false, ModeRequest.BY_OPERATOR);
            defaultReason = start.reason();
        } else {
            request = null;
            defaultReason = previous != null
                            && SOURCE_DEFAULT.equals(previous.source)
                            && previous.defaultReason != null
                            && mode.requested().equals(previous.requested)
                    ? previous.defaultReason
                    : "spec.mode is unset: the fleet keeps the mode last requested (" + mode.requested() + ", by "
                            + mode.requestedBy() + ")";
        }
        if (request != null && !request.writtenIn(mode)) {
            Instant at = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            Written written = store.request(fastTierUri, request, mode.version(), at);
            LOG.infof(
                    "event=mode-requested cluster=%s/%s mode=%s override=%s source=%s outcome=%s",
                    cluster.getMetadata().getNamespace(),
                    cluster.getMetadata().getName(),
                    request.mode().value(),
                    request.override(),
                    asked == null ? SOURCE_DEFAULT : SOURCE_SPEC,
                    written);
            if (written == Written.WRITTEN) {
                ModeEvents.requested(
                        client,
                        cluster,
                        request,
                        asked == null
                                ? "by default: " + defaultReason
                                : "by spec.mode (was "
                                        + (mode.requested() == null
                                                ? "never requested"
                                                : mode.requested() + (mode.override() ? " with override" : ""))
                                        + ")");
                mode = mode.with(request, at);
            }
        }
        ModeStatus status = status(reading.get().with(mode), Instant.now());
        status.source = asked == null ? SOURCE_DEFAULT : SOURCE_SPEC;
        status.defaultReason = defaultReason;
        ModeEvents.transitions(client, cluster, previous, status);
        ClusterMode requested = request != null
                ? request.mode()
                : asked != null
                        ? asked
                        : Optional.ofNullable(ClusterMode.of(mode.requested())).orElse(ClusterMode.of(mode.active()));
        List<Observed> conditions = new ArrayList<>(
                ModeConditions.of(requested == null ? ClusterMode.TIERED : requested, status, true, null));
        FollowerHealth.of(status, true, null, cluster).ifPresent(conditions::add);
        return new Outcome(status, conditions, (request != null && !request.writtenIn(mode)) || !mode.settled());
    }

    /** The status a mode document, the shadow evidence and the archive follower show at {@code now}. */
    public static ModeStatus status(ModeReading reading, Instant now) {
        ModeDocument mode = reading.mode();
        ShadowEvidence shadow = reading.shadow();
        ModeStatus s = new ModeStatus();
        s.requested = mode.requested();
        s.requestedAt = time(mode.requestedAt());
        s.requestedBy = mode.requestedBy();
        s.override = mode.override() ? Boolean.TRUE : null;
        s.active = mode.active();
        s.phase = mode.phase();
        s.since = time(mode.since());
        s.epoch = mode.epoch();
        s.refusal = mode.refusal();
        if (!shadow.empty()) {
            s.shadow = new ModeStatus.Shadow();
            s.shadow.reads = shadow.reads();
            s.shadow.wouldServe = shadow.wouldServe();
            s.shadow.wouldServePercent = shadow.wouldServePercent();
            s.shadow.comparisons = shadow.compared();
            s.shadow.divergences = shadow.diverged();
            s.shadow.lastDivergence = time(shadow.lastDivergenceAt());
            s.shadow.lastDivergenceNamespace = shadow.lastDivergenceNamespace();
        }
        if (mode.drain() != null) {
            s.drain = new ModeStatus.Drain();
            s.drain.feederLagSeconds = mode.drain().feederLagSeconds();
            s.drain.unmirroredEvents = mode.drain().unmirroredEvents();
            s.drain.startedAt = time(mode.drain().startedAt());
            s.drain.drainedAt = time(mode.drain().drainedAt());
        }
        s.follower = mode.archiveAuthoritative()
                ? follower(reading.follower(), lagTarget(mode, reading.archiveLatest()), now)
                : null;
        return s;
    }

    /**
     * What the follower must reach: the archive's latest optime; while cutting over, the cutover point (never later
     * than the archive's latest), which is all the data plane waits for.
     */
    private static BsonTimestamp lagTarget(ModeDocument mode, BsonTimestamp archiveLatest) {
        return ModeDocument.PHASE_CUTTING_OVER.equals(mode.phase()) && mode.cutoverAt() != null
                ? mode.cutoverAt()
                : archiveLatest;
    }

    private static ModeStatus.Follower follower(FollowerDocument d, BsonTimestamp target, Instant now) {
        ModeStatus.Follower f = new ModeStatus.Follower();
        f.running = d.running(now);
        f.holder = d.holder();
        f.term = d.holder() == null ? null : d.term();
        f.leaseExpiresAt = time(d.leaseExpiresAt());
        f.appliedThrough = d.appliedThrough() == null
                ? null
                : time(Instant.ofEpochSecond(FollowerDocument.seconds(d.appliedThrough())));
        f.archiveLatest = target == null ? null : time(Instant.ofEpochSecond(FollowerDocument.seconds(target)));
        f.lagSeconds = d.lagSeconds(target);
        if (d.resync() != null) {
            f.resync = new ModeStatus.Resync();
            f.resync.running = d.resync().running();
            f.resync.count = d.resync().count();
            f.resync.startedAt = time(d.resync().startedAt());
            f.resync.finishedAt = time(d.resync().finishedAt());
            f.resync.reason = d.resync().reason();
            f.resync.copied = d.resync().copied();
            f.resync.deleted = d.resync().deleted();
        }
        return f;
    }

    /** The last status seen stays; the conditions say it is not current. */
    private static Outcome unobserved(ThermoclineCluster cluster, ModeStatus previous, String why) {
        List<Observed> conditions = new ArrayList<>(ModeConditions.of(null, previous, false, why));
        FollowerHealth.of(previous, false, why, cluster).ifPresent(conditions::add);
        return new Outcome(previous, conditions, false);
    }

    private static String time(Instant at) {
        return at == null ? null : at.truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
