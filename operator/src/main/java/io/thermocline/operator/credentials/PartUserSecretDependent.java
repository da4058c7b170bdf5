package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.workflow.ClusterDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One data-plane part's fast-tier user and password, in a Secret of its own that only that part's pods
 * mount (so no part can read another's password). Generated once and kept, as the other Secrets the
 * fast tier's data needs ({@link RetainedSecretDependent}); one subclass per part, since each
 * dependent of the workflow is a class.
 */
public abstract class PartUserSecretDependent extends RetainedSecretDependent {

    private final DataPlanePart part;

    PartUserSecretDependent(DataPlanePart part) {
        this.part = part;
    }

    @Override
    protected Secret desired(DesiredCluster desired, Context<ThermoclineCluster> context) {
        // only used when the Secret is created: an existing one always matches
        Map<String, String> data = new LinkedHashMap<>();
        data.put(DataPlanePart.USERNAME, SecretText.encode(part.user()));
        data.put(DataPlanePart.PASSWORD, SecretText.encode(GeneratedSecrets.password()));
        return new SecretBuilder()
                .withMetadata(ClusterDependent.metadata(desired, part.secret(desired.layout()), part.role()))
                .withType("Opaque")
                .withData(data)
                .build();
    }

    @KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
    public static class Proxy extends PartUserSecretDependent {
        public Proxy() {
            super(DataPlanePart.PROXY);
        }
    }

    @KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
    public static class Feeder extends PartUserSecretDependent {
        public Feeder() {
            super(DataPlanePart.FEEDER);
        }
    }

    @KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
    public static class Evictor extends PartUserSecretDependent {
        public Evictor() {
            super(DataPlanePart.EVICTOR);
        }
    }

    @KubernetesDependent(informer = @Informer(labelSelector = ClusterDependent.MANAGED))
    public static class Warmer extends PartUserSecretDependent {
        public Warmer() {
            super(DataPlanePart.WARMER);
        }
    }
}
