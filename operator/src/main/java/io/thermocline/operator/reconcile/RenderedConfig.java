package io.thermocline.operator.reconcile;

import io.fabric8.kubernetes.api.model.Secret;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.InvalidConfigException;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.dataplane.DataPlaneMounts;
import io.thermocline.operator.fasttier.MongodArgs;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The data-plane config rendered from a spec ({@code yaml}, null when it cannot be rendered) and what is wrong with the
 * spec ({@code problem}, null when all is well): the workflow runs only with none.
 */
record RenderedConfig(String yaml, String problem) {

    private static final String VALIDATION_ARCHIVE_URI = "mongodb://archive.invalid:27017/?replicaSet=archive";

    static RenderedConfig of(ClusterLayout layout, ThermoclineClusterSpec spec, ArchiveSecrets.Lookup secrets) {
        try {
            String yaml = DataPlaneConfig.toYaml(spec, layout);
            return new RenderedConfig(yaml, problemOf(yaml, layout, spec, secrets));
        } catch (IllegalArgumentException e) {
            return new RenderedConfig(null, e.getMessage());
        }
    }

    /**
     * Validates the rendered config the way a data-plane pod will load it, and that the Secrets it mounts exist with
     * their keys (else the pods would hang in ContainerCreating); null when all is well.
     */
    static String problemOf(
            String configYaml, ClusterLayout layout, ThermoclineClusterSpec spec, ArchiveSecrets.Lookup secrets) {
        List<String> problems = new ArrayList<>();
        // the CRD refuses such names (CEL); a resource created under an older CRD, or where CEL is off, still gets here
        if (!layout.cluster().matches(ThermoclineCluster.NAME_PATTERN)
                || layout.cluster().length() > ThermoclineCluster.MAX_NAME_LENGTH) {
            problems.add("metadata.name " + layout.cluster()
                    + " cannot prefix the cluster's Service names (a DNS-1035 label:"
                    + " a lowercase letter first, then lowercase letters, digits and '-', at most "
                    + ThermoclineCluster.MAX_NAME_LENGTH
                    + " characters); re-create the resource under such a name");
        }
        if (spec.proxy.expose != null) {
            problems.addAll(spec.proxy.expose.problems());
        }
        problems.addAll(MongodArgs.problems(spec.fastTier.mongodArgs));
        problems.addAll(dataPlaneProblems(configYaml, layout, spec));
        problems.addAll(secretProblems(layout, spec, secrets));
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /** What the data plane's own loader says of the config (the files mounted into the pods are not here). */
    private static List<String> dataPlaneProblems(
            String configYaml, ClusterLayout layout, ThermoclineClusterSpec spec) {
        try {
            ConfigLoader.parse(
                    configYaml,
                    DataPlaneConfig.podEnvironment(
                            VALIDATION_ARCHIVE_URI,
                            UsersSecretDependent.fastTierUri(
                                    layout, spec.fastTier.members, "validation", "validation")));
            return List.of();
        } catch (InvalidConfigException e) {
            // the files the operator mounts into the pods are checked as Secrets
            return e.problems().stream()
                    .filter(p -> !p.contains(ClusterLayout.CONFIG_DIR + "/") || !p.contains(" cannot be read;"))
                    .map(p -> "the data plane rejects the rendered config: " + p)
                    .toList();
        }
    }

    /** The Secrets spec.auth and spec.tls name: each must exist with its key. */
    private static List<String> secretProblems(
            ClusterLayout layout, ThermoclineClusterSpec spec, ArchiveSecrets.Lookup secrets) {
        List<String> problems = new ArrayList<>();
        for (SecretKeyRef ref : DataPlaneMounts.referencedSecrets(spec)) {
            Secret secret = secrets.find(ref.name);
            if (secret == null) {
                problems.add("Secret " + layout.namespace() + "/" + ref.name
                        + " (named in spec.auth or spec.tls) does not exist; create it");
            } else if ((secret.getData() == null || !secret.getData().containsKey(ref.key))
                    && (secret.getStringData() == null
                            || !secret.getStringData().containsKey(ref.key))) {
                problems.add("Secret " + layout.namespace() + "/" + ref.name + " has no key " + ref.key + "; add it");
            }
        }
        return problems;
    }
}
