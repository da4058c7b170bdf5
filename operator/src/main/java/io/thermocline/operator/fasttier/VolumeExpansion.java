package io.thermocline.operator.fasttier;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.ArrayList;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * A grown {@code storage.size}: the StatefulSet's claim template cannot change (immutable), so
 * each member's PVC is patched instead, where its StorageClass allows expansion. What cannot be
 * done (no expansion, a smaller size) is reported; it never blocks the rest of the reconcile.
 */
public final class VolumeExpansion {

    private static final Logger LOG = Logger.getLogger(VolumeExpansion.class);

    private VolumeExpansion() {
    }

    /** Null when every member's volume has (or is being expanded to) the wanted size; else what a person must know. */
    public static String apply(KubernetesClient client, ClusterLayout layout, int members, String wantedSize) {
        Quantity wanted = new Quantity(wantedSize);
        List<String> problems = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            String name = layout.memberClaim(i);
            var resource = client.persistentVolumeClaims().inNamespace(layout.namespace()).withName(name);
            PersistentVolumeClaim claim = resource.get();
            if (claim == null) {
                continue;
            }
            Quantity current = claim.getSpec().getResources().getRequests().get("storage");
            int order = wanted.getNumericalAmount().compareTo(current.getNumericalAmount());
            if (order == 0) {
                continue;
            }
            if (order < 0) {
                problems.add(name + " has " + current + ": volumes cannot shrink; set storage.size back to at least " + current);
                continue;
            }
            String className = claim.getSpec().getStorageClassName();
            StorageClass storageClass = className == null ? null : client.storage().v1().storageClasses().withName(className).get();
            if (storageClass == null || !Boolean.TRUE.equals(storageClass.getAllowVolumeExpansion())) {
                problems.add(name + ": StorageClass " + className + " does not allow volume expansion (allowVolumeExpansion);"
                        + " set storage.size back to " + current + ", or migrate the members to a class that expands");
                continue;
            }
            resource.edit(c -> {
                c.getSpec().getResources().getRequests().put("storage", wanted);
                return c;
            });
            LOG.infof("event=volume-expanded cluster=%s/%s pvc=%s size=%s", layout.namespace(), layout.cluster(), name, wantedSize);
        }
        return problems.isEmpty() ? null : "fast-tier volumes: " + String.join("; ", problems);
    }
}
