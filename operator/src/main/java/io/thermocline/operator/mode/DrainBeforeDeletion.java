package io.thermocline.operator.mode;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterStatus;
import io.thermocline.operator.mode.ModeStore.ModeReading;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Conditions;
import io.thermocline.operator.status.Observed;
import io.thermocline.operator.status.TransitionEvents;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * The first step of deleting a cluster whose fleet is not Drained: request {@code draining} (the archive
 * becomes authoritative again while applications still connect through the proxy) and wait for
 * {@code Drained}, at most {@code bound} after the deletion was asked for; then the deletion's own
 * ordering (stop writes, wait for the feeder) follows, which holds every write even when the drain did
 * not finish. A fast tier whose mode cannot be read refuses the deletion: whether it holds writes the
 * archive lacks is then unknown, and deleting it could lose them.
 */
public final class DrainBeforeDeletion {

    public static final String DRAINING = "DeletionDraining";
    public static final String REFUSED = "DeletionRefused";
    public static final String TIMED_OUT = "DeletionDrainTimedOut";
    private static final Logger LOG = Logger.getLogger(DrainBeforeDeletion.class);

    /** What deletion waits on. */
    public record Pending(String reason, String message) {
    }

    private DrainBeforeDeletion() {
    }

    /** Null when deletion may go on to stopping writes; else why it waits. {@code fastTierUri} null: no credentials. */
    public static Pending step(KubernetesClient client, ThermoclineCluster cluster, ModeStore store, String fastTierUri,
            Duration bound, String skipAnnotation) {
        String override = " (annotate " + skipAnnotation + "=true to delete anyway and lose what is not mirrored)";
        Optional<ModeReading> reading = fastTierUri == null ? Optional.empty() : store.read(fastTierUri, null); // the follower's lag is not what deletion waits on
        if (reading.isEmpty()) {
            return refuse(client, cluster, "deletion refused: the fast tier cannot be "
                    + (fastTierUri == null ? "addressed (its users Secret has no connection string)" : "reached")
                    + ", so whether it holds writes the archive lacks is unknown; the resource and the fast tier stay until it"
                    + " can be read" + override);
        }
        ModeDocument mode = reading.get().mode();
        if (ModeDocument.PHASE_DRAINED.equals(mode.phase())) {
            report(client, cluster, reading.get().with(mode));
            return null;
        }
        ModeRequest drain = ModeRequest.drainForDeletion();
        if (!drain.writtenIn(mode)) {
            Instant at = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            if (store.request(fastTierUri, drain, mode.version(), at) == ModeStore.Written.WRITTEN) {
                ModeEvents.requested(client, cluster, drain, "by the deletion of the resource: it is drained before anything is removed");
                mode = mode.with(drain, at);
            }
        }
        report(client, cluster, reading.get().with(mode));
        Instant deletedAt = Instant.parse(cluster.getMetadata().getDeletionTimestamp());
        if (Instant.now().isAfter(deletedAt.plus(bound))) {
            TransitionEvents.once(client, cluster, TIMED_OUT, "the fleet did not reach Drained within " + bound
                    + " of the deletion (phase " + mode.phase() + "); deleting goes on by stopping writes and waiting"
                    + " for the feeder to mirror every fast-tier write", false);
            return null;
        }
        Pending pending = new Pending(DRAINING, "deleting: draining first (phase " + mode.phase()
                + "), so the archive alone is current before the fast tier goes; waiting at most " + bound + override);
        TransitionEvents.once(client, cluster, pending.reason(), pending.message(), true);
        return pending;
    }

    private static Pending refuse(KubernetesClient client, ThermoclineCluster cluster, String message) {
        TransitionEvents.once(client, cluster, REFUSED, message, false);
        patchStatus(client, cluster, null, List.of(Observed.isFalse(ConditionType.Drained, REFUSED, message)));
        return new Pending(REFUSED, message);
    }

    /** Status and Events as a reconcile would show them (no reconcile runs while a resource is being deleted). */
    private static void report(KubernetesClient client, ThermoclineCluster cluster, ModeReading reading) {
        ModeStatus before = cluster.getStatus() == null ? null : cluster.getStatus().mode;
        ModeStatus now = ModeDriver.status(reading, Instant.now());
        ModeEvents.transitions(client, cluster, before, now);
        patchStatus(client, cluster, now, ModeConditions.of(ClusterMode.DRAINING, now, true, null));
    }

    private static void patchStatus(KubernetesClient client, ThermoclineCluster cluster, ModeStatus mode, List<Observed> conditions) {
        long generation = Optional.ofNullable(cluster.getMetadata().getGeneration()).orElse(0L);
        try {
            client.resources(ThermoclineCluster.class).inNamespace(cluster.getMetadata().getNamespace())
                    .withName(cluster.getMetadata().getName()).editStatus(c -> {
                        ThermoclineClusterStatus status = c.getStatus() == null ? new ThermoclineClusterStatus() : c.getStatus();
                        if (mode != null) {
                            status.mode = mode;
                        }
                        for (Observed o : conditions) {
                            status.conditions = Conditions.replace(status.conditions, o, generation, Instant.now());
                        }
                        c.setStatus(status);
                        return c;
                    });
        } catch (RuntimeException e) {
            LOG.warnf("event=deletion-status-not-written cluster=%s/%s error=%s", cluster.getMetadata().getNamespace(),
                    cluster.getMetadata().getName(), e.getClass().getSimpleName());
        }
    }
}
