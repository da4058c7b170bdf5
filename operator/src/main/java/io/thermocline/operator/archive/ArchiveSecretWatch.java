package io.thermocline.operator.archive;

import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.thermocline.operator.api.v1alpha1.ArchiveSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneMounts;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Watches the Secrets a cluster names in {@code spec.archive} (connection string, CA), and those of
 * {@code spec.auth} and {@code spec.tls}: a
 * created or rotated Secret reconciles every cluster that reads it at once, and the reconcile
 * reads it from this informer's cache instead of a GET. The Secrets are the user's, so they
 * carry no label to select them by: the informer holds the Secrets of the watched namespaces.
 */
public final class ArchiveSecretWatch {

    public static final String NAME = "archive-secrets";
    private static final String INDEX = "archive-secret-refs";

    private ArchiveSecretWatch() {
    }

    public static InformerEventSource<Secret, ThermoclineCluster> eventSource(EventSourceContext<ThermoclineCluster> context) {
        context.getPrimaryCache().addIndexer(INDEX, cluster -> referenced(cluster).stream()
                .map(name -> key(cluster.getMetadata().getNamespace(), name)).toList());
        InformerEventSourceConfiguration<Secret> configuration = InformerEventSourceConfiguration
                .from(Secret.class, ThermoclineCluster.class)
                .withName(NAME)
                .withSecondaryToPrimaryMapper(secret -> context.getPrimaryCache()
                        .byIndex(INDEX, key(secret.getMetadata().getNamespace(), secret.getMetadata().getName())).stream()
                        .map(ResourceID::fromResource).collect(Collectors.toSet()))
                .withPrimaryToSecondaryMapper((ThermoclineCluster cluster) -> referenced(cluster).stream()
                        .map(name -> new ResourceID(name, cluster.getMetadata().getNamespace())).collect(Collectors.toSet()))
                .build();
        return new InformerEventSource<>(configuration, context);
    }

    /** Reads the cluster's Secrets from the watch's cache. */
    public static ArchiveSecrets.Lookup cached(Context<ThermoclineCluster> context) {
        String namespace = context.getPrimaryResource().getMetadata().getNamespace();
        InformerEventSource<Secret, ThermoclineCluster> secrets = (InformerEventSource<Secret, ThermoclineCluster>)
                context.eventSourceRetriever().getEventSourceFor(Secret.class, NAME);
        return name -> secrets.get(new ResourceID(name, namespace)).orElse(null);
    }

    static List<String> referenced(ThermoclineCluster cluster) {
        List<String> names = new ArrayList<>();
        ArchiveSpec archive = cluster.getSpec() == null ? null : cluster.getSpec().archive;
        if (archive != null && archive.uriSecretRef != null && archive.uriSecretRef.name != null) {
            names.add(archive.uriSecretRef.name);
        }
        if (archive != null && archive.tls != null && archive.tls.caSecretRef != null && archive.tls.caSecretRef.name != null) {
            names.add(archive.tls.caSecretRef.name);
        }
        if (cluster.getSpec() != null) { // the proxy's users file and certificates, the tiers' CA: a created one unblocks at once
            DataPlaneMounts.referencedSecrets(cluster.getSpec()).forEach(ref -> names.add(ref.name));
        }
        return List.copyOf(Set.copyOf(names));
    }

    private static String key(String namespace, String name) {
        return namespace + "/" + name;
    }
}
