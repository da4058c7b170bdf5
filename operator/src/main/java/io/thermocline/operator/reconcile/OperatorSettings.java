package io.thermocline.operator.reconcile;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;

/** The operator's own settings (application.properties or THERMOCLINE_OPERATOR_* environment variables). */
@ConfigMapping(prefix = "thermocline.operator")
public interface OperatorSettings {

    /** Data-plane image used when a resource does not set spec.image. */
    String dataPlaneImage();

    /** How long an archive probe result is reused across reconciles of one cluster. */
    @WithDefault("30s")
    Duration archiveProbeInterval();

    /** How often the feeder lag, drain state and tier sizes are polled per ready cluster (off the reconcile thread). */
    @WithDefault("30s")
    Duration tieringPollInterval();

    /** How soon the next replica-set step (add, remove, restart a member, ...) is checked while one is under way. */
    @WithDefault("3s")
    Duration replicaSetStepInterval();

    /** How soon the mode document is read again while the fleet moves between modes (or a request is not yet written). */
    @WithDefault("5s")
    Duration modeStepInterval();

    /**
     * How long deleting a resource waits for its fleet to reach Drained before it goes on by stopping writes
     * (which still waits for the feeder to mirror every write).
     */
    @WithDefault("30m")
    Duration deletionDrainTimeout();

    /**
     * The namespace the operator's pod runs in (the install sets it from the downward API): the
     * fast tier's NetworkPolicy admits the operator from there. Unset: from any namespace.
     */
    Optional<String> namespace();

    /**
     * Labels of the ServiceMonitor the operator makes for each cluster, as {@code key=value[,key=value]}: a Prometheus of
     * kube-prometheus-stack selects ServiceMonitors by {@code release: <its Helm release>} and ignores the others.
     */
    Optional<String> monitoringLabels();
}
