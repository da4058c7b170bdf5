package io.thermocline.operator.archive;

import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.thermocline.operator.api.v1alpha1.ArchiveSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.dataplane.DataPlaneMounts;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Watches the Secrets a cluster names in {@code spec.archive} (connection string, CA), and those of
 * {@code spec.auth} and {@code spec.tls}: a created or rotated Secret reconciles every cluster that reads it at once,
 * and the reconcile reads it from the watch's cache instead of a GET. Only the named Secrets are watched, one by one
 * ({@link ReferencedSecrets}): the user's Secrets carry no label to select them by.
 */
public final class ArchiveSecretWatch {

    public static final String NAME = "archive-secrets";

    private ArchiveSecretWatch() {
    }

    public static ReferencedSecrets eventSource(EventSourceContext<ThermoclineCluster> context) {
        return new ReferencedSecrets(context.getClient(), NAME);
    }

    /** The cluster's Secrets, from the watch (whose set this call brings up to what the cluster names now). */
    public static ArchiveSecrets.Lookup cached(Context<ThermoclineCluster> context) {
        ThermoclineCluster cluster = context.getPrimaryResource();
        String namespace = cluster.getMetadata().getNamespace();
        ReferencedSecrets secrets = of(context);
        secrets.track(ResourceID.fromResource(cluster), referenced(cluster).stream()
                .map(name -> new ResourceID(name, namespace)).collect(Collectors.toSet()));
        return name -> secrets.find(namespace, name);
    }

    /** The watch, e.g. to release a deleted cluster's Secrets. */
    public static ReferencedSecrets of(Context<ThermoclineCluster> context) {
        return (ReferencedSecrets) context.eventSourceRetriever().getEventSourceFor(Secret.class, NAME);
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

}
