package io.thermocline.operator.fasttier;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMountBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.FastTierSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.credentials.KeyfileSecretDependent;
import io.thermocline.operator.credentials.SecretEnv;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.fasttier.tls.TlsMode;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.layout.ContentHash;
import io.thermocline.operator.scheduling.PodScheduling;
import io.thermocline.operator.security.RestrictedPods;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import io.thermocline.operator.workflow.DrainHolderDependent;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The fast tier: mongod {@code --replSet} with the generated keyfile, one PVC per member.
 * Only member 0 gets the root user from the image's init (the others must start empty to
 * join); the operator then initiates the replica set through member 0.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class FastTierStatefulSetDependent extends DrainHolderDependent<StatefulSet> {

    public static final String COMPONENT = "fast-tier";
    static final String KEYFILE_PATH = "/keyfile/keyfile";
    /** Where mongod reads its certificate+key PEM and CA bundle (copied by the init container from the Secret). */
    public static final String TLS_DIR = "/tls";
    /** Pod-template annotation: the certificate and CA bundle the template's members run with. */
    public static final String TLS_HASH = "thermocline.io/tls-hash";
    // mongod wants certificate and key in one PEM; the members present it to each other too (clusterFile defaults to
    // it)
    private static final String COPY_TLS =
            " && cat /tls-secret/tls.crt /tls-secret/tls.key > " + TLS_DIR + "/server.pem"
                    + " && cp /tls-secret/ca.crt " + TLS_DIR + "/ca.crt && chmod 400 " + TLS_DIR + "/server.pem";
    /** Pod-template annotation: the hash of the template a pod was created from. */
    public static final String TEMPLATE_HASH = "thermocline.io/pod-template-hash";

    public FastTierStatefulSetDependent() {
        super(StatefulSet.class);
    }

    @Override
    protected StatefulSet desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        FastTierSpec spec = desired.spec().fastTier;
        String start =
                "if [ \"${HOSTNAME##*-}\" != \"0\" ]; then unset MONGO_INITDB_ROOT_USERNAME MONGO_INITDB_ROOT_PASSWORD; fi; "
                        + "exec docker-entrypoint.sh mongod --replSet " + layout.replicaSetName()
                        + " --bind_ip_all --port " + ClusterLayout.MONGOD_PORT + " --keyFile " + KEYFILE_PATH
                        + cacheSize(spec.resourcesOrDefault())
                                .map(gb -> " --wiredTigerCacheSizeGB " + gb)
                                .orElse("")
                        + tlsArgs(desired.tls().memberMode())
                        + MongodArgs.shellWords(spec.mongodArgs);
        TlsMode tls = desired.tls().memberMode();
        return new StatefulSetBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.fastTier(), COMPONENT))
                .withNewSpec()
                .withReplicas(desired.fastTierReplicas())
                .withServiceName(layout.fastTier())
                .withPodManagementPolicy("Parallel")
                // the operator restarts members itself, secondaries first and the primary after a step-down
                .withNewUpdateStrategy()
                .withType("OnDelete")
                .endUpdateStrategy()
                .withNewSelector()
                .withMatchLabels(layout.selector(COMPONENT))
                .endSelector()
                // the StatefulSet controller never deletes a volume: with retentionPolicy Delete the operator does,
                // after the drain
                .withNewPersistentVolumeClaimRetentionPolicy()
                .withWhenDeleted("Retain")
                .withWhenScaled("Retain")
                .endPersistentVolumeClaimRetentionPolicy()
                .withTemplate(withHash(new PodTemplateSpecBuilder()
                        // a renewed certificate or CA bundle changes the template: the members restart onto it one at a
                        // time
                        .withNewMetadata()
                        .withLabels(layout.labels(COMPONENT))
                        .withAnnotations(
                                tls == TlsMode.DISABLED
                                        ? null
                                        : Map.of(TLS_HASH, desired.tls().hash()))
                        .endMetadata()
                        .withSpec(PodScheduling.apply(new PodSpecBuilder(), spec, layout.selector(COMPONENT))
                                .withAffinity(
                                        spec.affinity != null
                                                ? spec.affinity
                                                : spreadOverNodes(layout, spec.spreadMembers))
                                .withTerminationGracePeriodSeconds(MemberProbes.TERMINATION_GRACE_SECONDS)
                                // mongod runs as the image's mongodb user; fsGroup makes the data volume and the
                                // keyfile emptyDir its group's
                                .withSecurityContext(RestrictedPods.pod(RestrictedPods.MONGOD_USER, true))
                                .addToInitContainers(new ContainerBuilder()
                                        .withName("keyfile")
                                        .withImage(desired.mongodImage())
                                        // mongod refuses a keyfile readable by group or others, which a Secret volume
                                        // with fsGroup would be;
                                        // the copy is the mongodb user's own (the container runs as it)
                                        .withCommand(
                                                "sh",
                                                "-c",
                                                "cp /keyfile-secret/" + KeyfileSecretDependent.KEY + " " + KEYFILE_PATH
                                                        + " && chmod 400 " + KEYFILE_PATH
                                                        + (tls == TlsMode.DISABLED ? "" : COPY_TLS))
                                        .withSecurityContext(RestrictedPods.container())
                                        .addNewVolumeMount()
                                        .withName("keyfile-secret")
                                        .withMountPath("/keyfile-secret")
                                        .withReadOnly(true)
                                        .endVolumeMount()
                                        .addNewVolumeMount()
                                        .withName("keyfile")
                                        .withMountPath("/keyfile")
                                        .endVolumeMount()
                                        .addAllToVolumeMounts(
                                                tls == TlsMode.DISABLED
                                                        ? List.of()
                                                        : List.of(
                                                                new VolumeMountBuilder()
                                                                        .withName("tls-secret")
                                                                        .withMountPath("/tls-secret")
                                                                        .withReadOnly(true)
                                                                        .build(),
                                                                new VolumeMountBuilder()
                                                                        .withName("tls")
                                                                        .withMountPath(TLS_DIR)
                                                                        .build()))
                                        .build())
                                .addToContainers(new ContainerBuilder()
                                        .withName("mongod")
                                        .withImage(desired.mongodImage())
                                        .withCommand("sh", "-c", start)
                                        .withEnv(rootUser(layout))
                                        .addNewPort()
                                        .withName("mongod")
                                        .withContainerPort(ClusterLayout.MONGOD_PORT)
                                        .endPort()
                                        // ready = PRIMARY or SECONDARY, not merely listening (a recovering or syncing
                                        // member is not)
                                        .withNewReadinessProbe()
                                        .withNewExec()
                                        .withCommand("sh", "-c", MemberProbes.ready(tls == TlsMode.REQUIRE))
                                        .endExec()
                                        .withPeriodSeconds(10)
                                        .withTimeoutSeconds(10)
                                        .withFailureThreshold(3)
                                        .endReadinessProbe()
                                        // WiredTiger recovery after a crash can take long: liveness starts only once
                                        // mongod listens
                                        .withNewStartupProbe()
                                        .withNewTcpSocket()
                                        .withPort(new IntOrString(ClusterLayout.MONGOD_PORT))
                                        .endTcpSocket()
                                        .withPeriodSeconds(10)
                                        .withFailureThreshold(MemberProbes.STARTUP_FAILURES)
                                        .endStartupProbe()
                                        .withNewLivenessProbe()
                                        .withNewTcpSocket()
                                        .withPort(new IntOrString(ClusterLayout.MONGOD_PORT))
                                        .endTcpSocket()
                                        .withPeriodSeconds(20)
                                        .withFailureThreshold(6)
                                        .endLivenessProbe()
                                        .withNewLifecycle()
                                        .withNewPreStop()
                                        .withNewExec()
                                        .withCommand("sh", "-c", MemberProbes.stepDown(tls == TlsMode.REQUIRE))
                                        .endExec()
                                        .endPreStop()
                                        .endLifecycle()
                                        .withResources(spec.resourcesOrDefault())
                                        .withSecurityContext(RestrictedPods.container())
                                        .addNewVolumeMount()
                                        .withName("data")
                                        .withMountPath("/data/db")
                                        .endVolumeMount()
                                        // the image's other volume; mongod writes it only as a config server, never
                                        // here, but keep it writable
                                        .addNewVolumeMount()
                                        .withName("configdb")
                                        .withMountPath("/data/configdb")
                                        .endVolumeMount()
                                        .addToVolumeMounts(RestrictedPods.tmpMount())
                                        .addNewVolumeMount()
                                        .withName("keyfile")
                                        .withMountPath("/keyfile")
                                        .endVolumeMount()
                                        .addAllToVolumeMounts(
                                                tls == TlsMode.DISABLED
                                                        ? List.of()
                                                        : List.of(new VolumeMountBuilder()
                                                                .withName("tls")
                                                                .withMountPath(TLS_DIR)
                                                                .withReadOnly(true)
                                                                .build()))
                                        .build())
                                .addAllToVolumes(
                                        tls == TlsMode.DISABLED
                                                ? List.of()
                                                : List.of(
                                                        new VolumeBuilder()
                                                                .withName("tls-secret")
                                                                .withNewSecret()
                                                                .withSecretName(layout.fastTierTlsSecret())
                                                                .endSecret()
                                                                .build(),
                                                        new VolumeBuilder()
                                                                .withName("tls")
                                                                .withNewEmptyDir()
                                                                .endEmptyDir()
                                                                .build()))
                                .addToVolumes(new VolumeBuilder()
                                        .withName("keyfile-secret")
                                        .withNewSecret()
                                        .withSecretName(layout.keyfileSecret())
                                        .endSecret()
                                        .build())
                                .addToVolumes(new VolumeBuilder()
                                        .withName("keyfile")
                                        .withNewEmptyDir()
                                        .endEmptyDir()
                                        .build())
                                .addToVolumes(new VolumeBuilder()
                                        .withName("configdb")
                                        .withNewEmptyDir()
                                        .endEmptyDir()
                                        .build())
                                .addToVolumes(RestrictedPods.tmpVolume())
                                .build())
                        .build()))
                .withVolumeClaimTemplates(new PersistentVolumeClaimBuilder()
                        .withNewMetadata()
                        .withName("data")
                        .withLabels(layout.labels(COMPONENT))
                        .endMetadata()
                        .withNewSpec()
                        .withAccessModes("ReadWriteOnce")
                        .withStorageClassName(spec.storage.storageClassName)
                        .withNewResources()
                        .withRequests(Map.of("storage", new Quantity(desired.fastTierClaimSize())))
                        .endResources()
                        .endSpec()
                        .build())
                .endSpec()
                .build();
    }

    /**
     * Percona's rule for the WiredTiger cache: 50 % of (memory limit - 1 GiB), at least 0.25 GiB;
     * mongod's own default reads the node's memory, not the container's limit, and gets OOM-killed.
     */
    static Optional<String> cacheSize(ResourceRequirements resources) {
        Quantity limit = resources == null || resources.getLimits() == null
                ? null
                : resources.getLimits().get("memory");
        if (limit == null) {
            return Optional.empty();
        }
        BigDecimal gib = limit.getNumericalAmount().divide(BigDecimal.valueOf(1L << 30), 10, RoundingMode.HALF_UP);
        BigDecimal cache = gib.subtract(BigDecimal.ONE)
                .divide(BigDecimal.valueOf(2), 2, RoundingMode.DOWN)
                .max(new BigDecimal("0.25"));
        return Optional.of(cache.stripTrailingZeros().toPlainString());
    }

    /** The template annotated with its own hash, so the operator can tell which pods run an older one (OnDelete). */
    private static PodTemplateSpec withHash(PodTemplateSpec template) {
        String hash = ContentHash.of(Serialization.asJson(template));
        Map<String, String> annotations = new TreeMap<>(
                Optional.ofNullable(template.getMetadata().getAnnotations()).orElse(Map.of()));
        annotations.put(TEMPLATE_HASH, hash);
        template.getMetadata().setAnnotations(annotations);
        return template;
    }

    /**
     * mongod's TLS flags for {@code mode}. Clients (the data plane, the operator) log in with SCRAM and present no
     * certificate, so connections without one are allowed; the keyfile still authenticates the members to each other.
     */
    static String tlsArgs(TlsMode mode) {
        if (mode == TlsMode.DISABLED) {
            return "";
        }
        return " --tlsMode " + mode.flag() + " --tlsCertificateKeyFile " + TLS_DIR + "/server.pem --tlsCAFile "
                + TLS_DIR + "/ca.crt --tlsAllowConnectionsWithoutCertificates";
    }

    /** The {@code --tlsMode} a member's pod was started with, read from its mongod command. */
    public static TlsMode tlsModeOf(PodSpec pod) {
        String command = pod.getContainers().stream()
                .filter(c -> "mongod".equals(c.getName()))
                .findFirst()
                .map(c -> String.join(" ", c.getCommand() == null ? List.of() : c.getCommand()))
                .orElse("");
        int at = command.indexOf("--tlsMode ");
        if (at < 0) {
            return TlsMode.DISABLED;
        }
        String rest = command.substring(at + "--tlsMode ".length());
        return TlsMode.ofFlag(rest.split(" ", 2)[0]);
    }

    private static List<EnvVar> rootUser(ClusterLayout layout) {
        return List.of(
                SecretEnv.of("MONGO_INITDB_ROOT_USERNAME", layout.usersSecret(), UsersSecretDependent.ROOT_USERNAME),
                SecretEnv.of("MONGO_INITDB_ROOT_PASSWORD", layout.usersSecret(), UsersSecretDependent.ROOT_PASSWORD));
    }

    /** One member per node: required by default (as Percona's operator), preferred only when asked for. */
    static Affinity spreadOverNodes(ClusterLayout layout, String spread) {
        var term = new io.fabric8.kubernetes.api.model.PodAffinityTermBuilder()
                .withTopologyKey("kubernetes.io/hostname")
                .withNewLabelSelector()
                .withMatchLabels(layout.selector(COMPONENT))
                .endLabelSelector()
                .build();
        if (FastTierSpec.SPREAD_PREFERRED.equals(spread)) {
            return new AffinityBuilder()
                    .withNewPodAntiAffinity()
                    .addNewPreferredDuringSchedulingIgnoredDuringExecution()
                    .withWeight(100)
                    .withPodAffinityTerm(term)
                    .endPreferredDuringSchedulingIgnoredDuringExecution()
                    .endPodAntiAffinity()
                    .build();
        }
        return new AffinityBuilder()
                .withNewPodAntiAffinity()
                .addToRequiredDuringSchedulingIgnoredDuringExecution(term)
                .endPodAntiAffinity()
                .build();
    }
}
