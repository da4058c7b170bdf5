package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.Map;

/**
 * The proxy fleet's peer-link key (the data plane's {@code fleet.secretFile}): only replicas holding it
 * may forward cursor commands to each other. Generated once (create-only) and kept, like the keyfile,
 * so the replicas of a rolling update, old and new, still recognise each other. Mounted into the
 * proxy pods only.
 */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class PeerSecretDependent extends RetainedSecretDependent {

    public static final String KEY = "secret";

    public PeerSecretDependent() {
        super();
    }

    @Override
    protected Secret desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        return new SecretBuilder()
                .withMetadata(ClusterDependent.metadata(desired, desired.layout().peerSecret(), "proxy"))
                .withType("Opaque")
                .withData(Map.of(KEY, SecretText.encode(GeneratedSecrets.peerKey())))
                .build();
    }
}
