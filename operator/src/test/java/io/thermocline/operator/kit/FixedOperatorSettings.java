package io.thermocline.operator.kit;

import io.thermocline.operator.reconcile.OperatorSettings;
import java.time.Duration;
import java.util.Optional;

/**
 * The operator's settings as a test fixes them, for a reconciler or a status report built outside Quarkus (which
 * maps them from application.properties): no operator namespace, no monitoring labels.
 */
public record FixedOperatorSettings(
        String dataPlaneImage,
        Duration archiveProbeInterval,
        Duration tieringPollInterval,
        Duration replicaSetStepInterval,
        Duration modeStepInterval,
        Duration deletionDrainTimeout)
        implements OperatorSettings {

    @Override
    public Optional<String> namespace() {
        return Optional.empty();
    }

    @Override
    public Optional<String> monitoringLabels() {
        return Optional.empty();
    }
}
