package io.thermocline.operator.mode;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.mode.ModeStore.ModeReading;
import io.thermocline.operator.mode.ModeStore.Written;
import io.thermocline.operator.status.Observed;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Drives {@code spec.mode}: the operator only writes the request into the fast tier's mode document and
 * reads back what the fleet does. The transition itself (the epoch every proxy acknowledges, the cutover
 * gate, the drain) is the data plane's controller's, so no proxy ever acts on a mode the others do not.
 */
public final class ModeDriver {

    private static final Logger LOG = Logger.getLogger(ModeDriver.class);

    /** The mode part of the status, its conditions, and whether a transition is under way (come back soon). */
    public record Outcome(ModeStatus status, List<Observed> conditions, boolean settling) {
    }

    private ModeDriver() {
    }

    /** {@code fastTierUri} null: the fast tier cannot be addressed yet (no converged replica set, no credentials). */
    public static Outcome reconcile(KubernetesClient client, ThermoclineCluster cluster, ModeStore store, String fastTierUri) {
        ModeStatus previous = cluster.getStatus() == null ? null : cluster.getStatus().mode;
        ModeRequest request = ModeRequest.of(cluster.getSpec());
        if (fastTierUri == null) {
            return unobserved(request, previous, "the fast tier is not ready; mode " + request.mode().value() + " is requested once it is");
        }
        Optional<ModeReading> reading = store.read(fastTierUri);
        if (reading.isEmpty()) {
            return unobserved(request, previous, "the fast tier's mode document cannot be read right now");
        }
        ModeDocument mode = reading.get().mode();
        if (!request.writtenIn(mode)) {
            Instant at = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            Written written = store.request(fastTierUri, request, mode.version(), at);
            LOG.infof("event=mode-requested cluster=%s/%s mode=%s override=%s outcome=%s", cluster.getMetadata().getNamespace(),
                    cluster.getMetadata().getName(), request.mode().value(), request.override(), written);
            if (written == Written.WRITTEN) {
                ModeEvents.requested(client, cluster, request, "by spec.mode (was " + (mode.requested() == null
                        ? "never requested" : mode.requested() + (mode.override() ? " with override" : "")) + ")");
                mode = mode.with(request, at);
            }
        }
        ModeStatus status = status(mode, reading.get().shadow());
        ModeEvents.transitions(client, cluster, previous, status);
        return new Outcome(status, ModeConditions.of(request.mode(), status, true, null),
                !request.writtenIn(mode) || !mode.settled());
    }

    /** The status a mode document and the shadow evidence show. */
    public static ModeStatus status(ModeDocument mode, ShadowEvidence shadow) {
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
        return s;
    }

    /** The last status seen stays; the conditions say it is not current. */
    private static Outcome unobserved(ModeRequest request, ModeStatus previous, String why) {
        return new Outcome(previous, ModeConditions.of(request.mode(), previous, false, why), false);
    }

    private static String time(Instant at) {
        return at == null ? null : at.truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
