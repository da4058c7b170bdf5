package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.TlsSpec;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.fasttier.FastTierStatefulSetDependent;
import io.thermocline.operator.fasttier.tls.FastTierCertificates;
import io.thermocline.operator.fasttier.tls.FastTierTls;
import io.thermocline.operator.fasttier.tls.FastTierTrust;
import io.thermocline.operator.fasttier.tls.TlsMode;
import io.thermocline.operator.fasttier.tls.TlsRollout;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.layout.ContentHash;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Observed;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One reconcile's fast-tier TLS: certificates made or renewed, the next step of the TLS rollout
 * ({@link TlsRollout}), the data plane's CA bundle written, the operator's own trust recorded, and the
 * {@code CertificatesReady} condition (absent while the fast tier has no TLS and is not to get it).
 */
public final class FastTierTlsStep {

    /** What the reconcile hands on: the plan for the dependents, and the condition (null: none to report). */
    public record Result(FastTierTls tls, Observed condition) {}

    /** The data plane's pods as they run now, to tell whether every client already connects with TLS. */
    public record Clients(Deployment proxy, Deployment feeder, Job warmer) {}

    private FastTierTlsStep() {}

    public static Result run(
            KubernetesClient client,
            ThermoclineCluster cluster,
            StatefulSet current,
            Clients clients,
            ArchiveSecrets.Lookup userSecrets,
            Instant now) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        TlsSpec spec = cluster.getSpec().tls == null ? new TlsSpec() : cluster.getSpec().tls;
        TlsMode target = spec.fastTierTls() ? TlsMode.REQUIRE : TlsMode.DISABLED;
        TlsMode templateNow = current == null
                ? null
                : FastTierStatefulSetDependent.tlsModeOf(
                        current.getSpec().getTemplate().getSpec());
        if (target == TlsMode.DISABLED && (templateNow == null || templateNow == TlsMode.DISABLED)) {
            FastTierTrust.record(layout, null);
            return new Result(FastTierTls.OFF, null);
        }
        int members = cluster.getSpec().fastTier.members;
        List<Pod> pods = current == null
                ? List.of()
                : client.pods()
                        .inNamespace(layout.namespace())
                        .withLabels(layout.selector(FastTierStatefulSetDependent.COMPONENT))
                        .list()
                        .getItems();
        List<TlsMode> modes = pods.stream()
                .map(p -> FastTierStatefulSetDependent.tlsModeOf(p.getSpec()))
                .toList();
        boolean membersCurrent =
                current != null && pods.size() >= members && pods.stream().allMatch(p -> sameTemplate(p, current));
        boolean clientsOnTls = clientsOnTls(clients);
        FastTierCertificates.Material material =
                FastTierCertificates.ensure(client, cluster, members, membersCurrent && rolledOut(clients), now);

        TlsRollout rollout = TlsRollout.next(target, templateNow, modes, members, clientsOnTls);
        boolean noTlsYet = templateNow == null || templateNow == TlsMode.DISABLED;
        if (!material.usable() && noTlsYet) {
            rollout = new TlsRollout(
                    TlsMode.DISABLED, false); // never start TLS without a certificate the members can load
        }
        String clientBundle = null;
        if (rollout.clientsTls() && material.bundle() != null) {
            clientBundle = material.bundle() + userCas(spec, userSecrets);
            writeBundle(client, cluster, layout, clientBundle);
        }
        FastTierTrust.record(layout, rollout.clientsTls() ? material.bundle() : null);
        FastTierTls tls = new FastTierTls(rollout, material, clientBundle == null ? "" : ContentHash.of(clientBundle));
        return new Result(tls, condition(material, rollout, target, modes, members));
    }

    private static Observed condition(
            FastTierCertificates.Material material,
            TlsRollout rollout,
            TlsMode target,
            List<TlsMode> modes,
            int members) {
        long onTarget = modes.stream().filter(m -> m == rollout.template()).count();
        String progress = "fast tier "
                + (rollout.template().flag() == null
                        ? "without TLS"
                        : "tlsMode " + rollout.template().flag())
                + " on " + onTarget + "/" + members + " members"
                + (rollout.template() == target
                        ? ""
                        : ", on its way to " + (target.flag() == null ? "no TLS" : target.flag()))
                + "; clients " + (rollout.clientsTls() ? "use TLS" : "plain text");
        if (material.problem() != null) {
            return Observed.isFalse(
                    ConditionType.CertificatesReady,
                    material.problem().reason(),
                    material.problem().message() + " (" + progress + ")");
        }
        return Observed.isTrue(
                ConditionType.CertificatesReady,
                "CertificatesValid",
                "certificate valid until " + material.notAfter() + " (" + progress + ")");
    }

    /** The user's CAs (the archive's) the data plane must trust beside the fast tier's. */
    private static String userCas(TlsSpec spec, ArchiveSecrets.Lookup userSecrets) {
        SecretKeyRef ref = spec.tierCaSecretRef;
        if (ref == null) {
            return "";
        }
        Secret secret = userSecrets.find(ref.name);
        String key = ref.keyOr(TlsSpec.DEFAULT_CA_KEY);
        if (secret == null || secret.getData() == null || !secret.getData().containsKey(key)) {
            return "";
        }
        String pem = new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
        return pem.endsWith("\n") ? pem : pem + "\n";
    }

    private static void writeBundle(
            KubernetesClient client, ThermoclineCluster cluster, ClusterLayout layout, String bundle) {
        Secret existing = client.secrets()
                .inNamespace(layout.namespace())
                .withName(layout.tierCaSecret())
                .get();
        FastTierCertificates.write(
                client,
                cluster,
                layout,
                layout.tierCaSecret(),
                FastTierCertificates.decoded(existing),
                Map.of(DataPlaneContainer.TIER_CA_KEY, bundle));
    }

    /** Whether every data-plane pod that may be connected now runs a template that connects with TLS. */
    static boolean clientsOnTls(Clients clients) {
        return deploymentOn(clients.proxy(), true)
                && deploymentOn(clients.feeder(), true)
                && (clients.warmer() == null
                        || finished(clients.warmer())
                        || tls(clients.warmer().getSpec().getTemplate()));
    }

    /** Whether the proxy and feeder run their current template on every pod (the CA rotation waits for it). */
    static boolean rolledOut(Clients clients) {
        return deploymentOn(clients.proxy(), false) && deploymentOn(clients.feeder(), false);
    }

    private static boolean deploymentOn(Deployment deployment, boolean mustUseTls) {
        if (deployment == null) {
            return true; // not created yet: nothing connects
        }
        if (mustUseTls && !tls(deployment.getSpec().getTemplate())) {
            return false;
        }
        var status = deployment.getStatus();
        int wanted = deployment.getSpec().getReplicas() == null
                ? 1
                : deployment.getSpec().getReplicas();
        return status != null
                && Objects.equals(
                        status.getObservedGeneration(), deployment.getMetadata().getGeneration())
                && orZero(status.getUpdatedReplicas()) >= wanted
                && orZero(status.getReplicas()) <= wanted;
    }

    private static boolean tls(PodTemplateSpec template) {
        return template.getSpec().getContainers().stream()
                .map(Container::getEnv)
                .filter(Objects::nonNull)
                .anyMatch(env -> env.stream().anyMatch(e -> DataPlaneContainer.TIER_CA_FILE_ENV.equals(e.getName())));
    }

    private static boolean finished(Job job) {
        return job.getStatus() != null
                && (orZero(job.getStatus().getSucceeded()) > 0
                        || (job.getStatus().getActive() == null
                                        || job.getStatus().getActive() == 0)
                                && job.getStatus().getStartTime() != null);
    }

    private static boolean sameTemplate(Pod pod, StatefulSet statefulSet) {
        Map<String, String> wanted =
                statefulSet.getSpec().getTemplate().getMetadata().getAnnotations();
        Map<String, String> has = pod.getMetadata().getAnnotations();
        return wanted != null
                && has != null
                && Objects.equals(
                        wanted.get(FastTierStatefulSetDependent.TEMPLATE_HASH),
                        has.get(FastTierStatefulSetDependent.TEMPLATE_HASH));
    }

    private static int orZero(Integer value) {
        return value == null ? 0 : value;
    }
}
