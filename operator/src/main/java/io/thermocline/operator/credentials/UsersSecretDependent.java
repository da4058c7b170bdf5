package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.fasttier.tls.FastTierTrust;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The operator's fast-tier users: a root user (to initiate and reconfigure the replica set) and
 * the operator's own user (each data-plane part has its own, {@link PartUserSecretDependent}). Passwords are generated once, when
 * the Secret is created, and never changed (create-only, see {@link RetainedSecretDependent}).
 * The data-plane pods compose their fast-tier connection string from the password (see
 * {@link #fastTierUri}), so it follows the member count without the Secret changing; a
 * {@code fast-uri} key left by an earlier operator version is unused.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class UsersSecretDependent extends RetainedSecretDependent {

    public static final String ROOT_USERNAME = "root-username";
    public static final String ROOT_PASSWORD = "root-password";
    public static final String DATA_PLANE_USERNAME = "data-plane-username";
    public static final String DATA_PLANE_PASSWORD = "data-plane-password";

    public UsersSecretDependent() {
        super();
    }

    @Override
    protected Secret desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        // only used when the Secret is created: an existing one always matches
        Map<String, String> data = new LinkedHashMap<>();
        data.put(ROOT_USERNAME, SecretText.encode(ClusterLayout.ROOT_USER));
        data.put(ROOT_PASSWORD, SecretText.encode(GeneratedSecrets.password()));
        data.put(DATA_PLANE_USERNAME, SecretText.encode(ClusterLayout.DATA_PLANE_USER));
        data.put(DATA_PLANE_PASSWORD, SecretText.encode(GeneratedSecrets.password()));
        return new SecretBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.usersSecret(), "fast-tier"))
                .withType("Opaque")
                .withData(data)
                .build();
    }

    /**
     * The data plane's fast-tier connection string. Pods pass {@code $(VAR)} as the password, which
     * Kubernetes expands from an earlier {@code secretKeyRef} variable, so no password is in the pod spec.
     */
    public static String fastTierUri(ClusterLayout layout, int members, String user, String password) {
        return "mongodb://" + user + ":" + password + "@" + String.join(",", layout.memberHosts(members))
                + "/?replicaSet=" + layout.replicaSetName() + "&authSource=admin";
    }

    /** The data plane's fast-tier connection string from the stored Secret; null before it exists. */
    public static String fastTierUri(ClusterLayout layout, int members, Map<String, String> users) {
        String password = users.get(DATA_PLANE_PASSWORD);
        // the operator's own clients: TLS once every member accepts it (FastTierTrust has its CA then)
        return password == null
                ? null
                : fastTierUri(layout, members, users.get(DATA_PLANE_USERNAME), password)
                        + (FastTierTrust.tls(layout) ? "&tls=true" : "");
    }

    /**
     * The operator's own fast-tier user (this Secret's {@code data-plane-*} keys, the one user every part shared
     * before each got its own): the mode document and the tiering observer. It keeps the roles it was created
     * with, since pods from before the per-part users may still use it while they roll.
     */
    public static FastTierUser operatorUser(ClusterLayout layout, Map<String, String> users) {
        return new FastTierUser(
                users.getOrDefault(DATA_PLANE_USERNAME, ClusterLayout.DATA_PLANE_USER),
                users.get(DATA_PLANE_PASSWORD),
                layout.usersSecret(),
                List.of("readWriteAnyDatabase@admin", "clusterMonitor@admin"),
                List.of(),
                List.of());
    }

    /** Every user the operator keeps on the fast tier: its own, then one per data-plane part (password null: no Secret yet). */
    public static List<FastTierUser> fastTierUsers(
            ClusterLayout layout,
            List<CollectionSpec> collections,
            Map<String, String> users,
            Function<String, Secret> secrets) {
        List<FastTierUser> all = new ArrayList<>();
        all.add(operatorUser(layout, users));
        for (DataPlanePart part : DataPlanePart.values()) {
            all.add(part.fastTierUser(
                    layout,
                    collections,
                    decoded(secrets.apply(part.secret(layout))).get(DataPlanePart.PASSWORD)));
        }
        return all;
    }

    /** The root credentials from a stored users Secret, for the replica-set initiator. */
    public static Map<String, String> decoded(Secret secret) {
        Map<String, String> out = new LinkedHashMap<>();
        if (secret != null && secret.getData() != null) {
            secret.getData().forEach((k, v) -> out.put(k, SecretText.decode(v)));
        }
        return out;
    }
}
