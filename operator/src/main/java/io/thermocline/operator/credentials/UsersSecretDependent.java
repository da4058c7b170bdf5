package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The fast tier's internal users: a root user (used by the operator to initiate and
 * reconfigure the replica set) and the data plane's user, with the fast-tier connection
 * string the data-plane pods read from here. Passwords are generated once and kept; the
 * connection string follows the member count.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class UsersSecretDependent extends RetainedSecretDependent {

    public static final String ROOT_USERNAME = "root-username";
    public static final String ROOT_PASSWORD = "root-password";
    public static final String DATA_PLANE_USERNAME = "data-plane-username";
    public static final String DATA_PLANE_PASSWORD = "data-plane-password";
    public static final String FAST_URI = "fast-uri";

    public UsersSecretDependent() {
        super();
    }

    @Override
    protected Secret desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        ClusterLayout layout = desired.layout();
        Map<String, String> existing = StoredSecret.data(context, layout.namespace(), layout.usersSecret());
        String rootPassword = existing.containsKey(ROOT_PASSWORD)
                ? existing.get(ROOT_PASSWORD) : StoredSecret.encode(GeneratedSecrets.password());
        String dataPlanePassword = existing.containsKey(DATA_PLANE_PASSWORD)
                ? existing.get(DATA_PLANE_PASSWORD) : StoredSecret.encode(GeneratedSecrets.password());
        Map<String, String> data = new LinkedHashMap<>();
        data.put(ROOT_USERNAME, StoredSecret.encode(ClusterLayout.ROOT_USER));
        data.put(ROOT_PASSWORD, rootPassword);
        data.put(DATA_PLANE_USERNAME, StoredSecret.encode(ClusterLayout.DATA_PLANE_USER));
        data.put(DATA_PLANE_PASSWORD, dataPlanePassword);
        data.put(FAST_URI, StoredSecret.encode(fastTierUri(layout, desired.spec().fastTier.members,
                ClusterLayout.DATA_PLANE_USER, StoredSecret.decode(dataPlanePassword))));
        return new SecretBuilder()
                .withMetadata(ClusterDependent.metadata(desired, layout.usersSecret(), "fast-tier"))
                .withType("Opaque")
                .withData(data)
                .build();
    }

    public static String fastTierUri(ClusterLayout layout, int members, String user, String password) {
        return "mongodb://" + user + ":" + password + "@" + String.join(",", layout.memberHosts(members))
                + "/?replicaSet=" + layout.replicaSetName() + "&authSource=admin";
    }

    /** The root credentials from a stored users Secret, for the replica-set initiator. */
    public static Map<String, String> decoded(Secret secret) {
        Map<String, String> out = new LinkedHashMap<>();
        if (secret != null && secret.getData() != null) {
            secret.getData().forEach((k, v) -> out.put(k, StoredSecret.decode(v)));
        }
        return out;
    }
}
