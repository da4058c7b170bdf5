package io.thermocline.operator.dataplane;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.thermocline.operator.api.v1alpha1.ArchiveSpec;
import io.thermocline.operator.api.v1alpha1.PodPlacement;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.credentials.DataPlanePart;
import io.thermocline.operator.credentials.SecretEnv;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.scheduling.PodScheduling;
import io.thermocline.operator.security.RestrictedPods;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.ArrayList;
import java.util.List;

/**
 * The one container shape of every data-plane process: {@code thermocline <role> --config
 * /etc/thermocline/thermocline.yaml}, the rendered ConfigMap mounted, connection strings
 * from Secrets.
 */
public final class DataPlaneContainer {

    public static final String CA_DIR = DataPlaneMounts.ARCHIVE_CA_DIR;
    /** This part's own fast-tier password, from its Secret, expanded into the fast-tier URI. */
    public static final String FAST_PASSWORD_ENV = "FAST_TIER_PASSWORD";

    /** The data plane's {@code tls.tierCaFile}, overridden to the operator's bundle when the fast tier speaks TLS. */
    public static final String TIER_CA_FILE_ENV = "THERMOCLINE_TLS_TIER_CA_FILE";

    public static final String TIER_CA_KEY = "ca.crt";

    private DataPlaneContainer() {}

    public static ContainerBuilder container(DesiredCluster desired, String role, ResourceRequirements resources) {
        return container(desired, DataPlanePart.of(role), role, role, resources);
    }

    /**
     * A one-shot {@code thermocline} command ({@code backup-point}, {@code restore-sync}) in a container named {@code name}:
     * it logs in as the proxy's fast-tier user (the one part allowed to write the tiered collections and the mode document),
     * and gets a worker's mounts and overrides (it serves no clients). {@code command} replaces the container's command.
     */
    public static ContainerBuilder operation(
            DesiredCluster desired, String name, List<String> command, ResourceRequirements resources) {
        return container(desired, DataPlanePart.PROXY, name, OPERATION, resources)
                .withCommand(command)
                .withArgs(List.of());
    }

    /** The mounts and overrides role of {@link #operation}: no proxy's. */
    private static final String OPERATION = "operation";

    private static ContainerBuilder container(
            DesiredCluster desired, DataPlanePart part, String name, String role, ResourceRequirements resources) {
        ArchiveSpec archive = desired.spec().archive;
        List<EnvVar> env = new ArrayList<>();
        env.add(SecretEnv.of(
                DataPlaneConfig.ARCHIVE_URI_ENV,
                archive.uriSecretRef.name,
                archive.uriSecretRef.keyOr(ArchiveSpec.DEFAULT_URI_KEY)));
        // each part logs in as its own user; Kubernetes expands $(FAST_TIER_PASSWORD) from the variable before it,
        // so the URI follows the member count and no password is in the pod spec
        env.add(SecretEnv.of(FAST_PASSWORD_ENV, part.secret(desired.layout()), DataPlanePart.PASSWORD));
        boolean tls = desired.tls().clientsTls();
        env.add(new EnvVarBuilder()
                .withName(DataPlaneConfig.FAST_URI_ENV)
                .withValue(UsersSecretDependent.fastTierUri(
                                desired.layout(),
                                desired.spec().fastTier.members,
                                part.user(),
                                "$(" + FAST_PASSWORD_ENV + ")")
                        + (tls ? "&tls=true" : ""))
                .build());
        if (tls) { // the operator's bundle: the fast tier's CAs and spec.tls.tierCaSecretRef's, one file for both tiers
            env.add(new EnvVarBuilder()
                    .withName(TIER_CA_FILE_ENV)
                    .withValue(DataPlaneMounts.TIER_CA_DIR + "/" + TIER_CA_KEY)
                    .build());
        }
        env.addAll(DataPlaneMounts.overrides(role));
        ContainerBuilder container = new ContainerBuilder()
                .withName(name)
                .withImage(desired.dataPlaneImage())
                .withCommand("thermocline")
                .withArgs(role, "--config", ClusterLayout.CONFIG_DIR + "/" + ClusterLayout.CONFIG_FILE)
                .withEnv(env)
                .withResources(resources)
                .withSecurityContext(RestrictedPods.container())
                .addToVolumeMounts(RestrictedPods.tmpMount())
                .addNewVolumeMount()
                .withName("config")
                .withMountPath(ClusterLayout.CONFIG_DIR)
                .withReadOnly(true)
                .endVolumeMount();
        if (caRef(desired) != null) {
            container
                    .addNewEnv()
                    .withName("THERMOCLINE_ARCHIVE_CA_FILE")
                    .withValue(CA_DIR + "/" + caRef(desired).keyOr("ca.crt"))
                    .endEnv();
        }
        for (DataPlaneMounts.Mount mount : mounts(desired, role)) {
            container
                    .addNewVolumeMount()
                    .withName(mount.volume())
                    .withMountPath(mount.dir())
                    .withReadOnly(true)
                    .endVolumeMount();
        }
        return container;
    }

    /**
     * A worker (feeder, evictor, warmer) serving {@code /metrics} on the port the metrics Services
     * select by name ({@code http}); the proxy serves it on its {@code proxy.httpPort} without a flag.
     */
    public static ContainerBuilder withMetrics(ContainerBuilder worker) {
        return worker.addToArgs("--metrics", "0.0.0.0:" + ClusterLayout.HTTP_PORT)
                .addNewPort()
                .withName("http")
                .withContainerPort(ClusterLayout.HTTP_PORT)
                .endPort();
    }

    /**
     * Pod spec with the config volume and the Secrets {@link DataPlaneMounts} gives {@code container}'s role, placed as
     * {@code placement} says ({@code component}: the pods' own component label, for spread constraints that name no pods).
     */
    public static PodSpecBuilder podSpec(
            DesiredCluster desired, Container container, PodPlacement placement, String component) {
        return podSpec(desired, container, container.getName(), placement, component);
    }

    /** The pod spec of an {@link #operation} container. */
    public static PodSpecBuilder operationPodSpec(
            DesiredCluster desired, Container container, PodPlacement placement, String component) {
        return podSpec(desired, container, OPERATION, placement, component);
    }

    private static PodSpecBuilder podSpec(
            DesiredCluster desired, Container container, String role, PodPlacement placement, String component) {
        List<Volume> volumes = new ArrayList<>();
        volumes.add(new VolumeBuilder()
                .withName("config")
                .withNewConfigMap()
                .withName(desired.layout().config())
                .endConfigMap()
                .build());
        for (DataPlaneMounts.Mount mount : mounts(desired, role)) {
            volumes.add(new VolumeBuilder()
                    .withName(mount.volume())
                    .withNewSecret()
                    .withSecretName(mount.secret())
                    .endSecret()
                    .build());
        }
        volumes.add(RestrictedPods.tmpVolume());
        return PodScheduling.apply(
                        new PodSpecBuilder(), placement, desired.layout().selector(component))
                .withSecurityContext(RestrictedPods.pod(RestrictedPods.DATA_PLANE_USER, false))
                .withContainers(container)
                .withVolumes(volumes);
    }

    /**
     * {@link DataPlaneMounts}, with the operator's tier CA bundle in place of the user's once the fast tier speaks TLS, and
     * the proxy's certificate the operator issues when the spec names none.
     */
    private static List<DataPlaneMounts.Mount> mounts(DesiredCluster desired, String role) {
        List<DataPlaneMounts.Mount> mounts =
                new ArrayList<>(DataPlaneMounts.of(desired.spec(), desired.layout(), role));
        if (desired.tls().clientsTls()) {
            mounts.removeIf(m -> m.dir().equals(DataPlaneMounts.TIER_CA_DIR));
            mounts.add(
                    new DataPlaneMounts.Mount("tier-ca", desired.layout().tierCaSecret(), DataPlaneMounts.TIER_CA_DIR));
        }
        if (DataPlaneMounts.PROXY.equals(role)
                && desired.spec().tls != null
                && desired.spec().tls.proxyCertificateGenerated()) {
            mounts.add(new DataPlaneMounts.Mount(
                    "certificate", desired.layout().proxyTlsSecret(), DataPlaneMounts.CERTIFICATE_DIR));
        }
        return mounts;
    }

    private static SecretKeyRef caRef(DesiredCluster desired) {
        ArchiveSpec.TlsSpec tls = desired.spec().archive.tls;
        return tls == null ? null : tls.caSecretRef;
    }
}
