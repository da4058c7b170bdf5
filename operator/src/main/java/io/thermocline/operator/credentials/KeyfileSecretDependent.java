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

/** The fast tier's internal-authentication keyfile, generated once (create-only) and then kept as it is. */
@KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
public class KeyfileSecretDependent extends RetainedSecretDependent {

    public static final String KEY = "keyfile";

    public KeyfileSecretDependent() {
        super();
    }

    @Override
    protected Secret desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        String name = desired.layout().keyfileSecret();
        return new SecretBuilder()
                .withMetadata(ClusterDependent.metadata(desired, name, "fast-tier"))
                .withType("Opaque")
                .withData(Map.of(KEY, SecretText.encode(GeneratedSecrets.keyfile())))
                .build();
    }
}
