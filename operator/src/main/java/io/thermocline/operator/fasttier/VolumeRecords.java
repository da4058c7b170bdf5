package io.thermocline.operator.fasttier;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.archive.VersionPolicy;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * The mongod version and featureCompatibilityVersion the members last converged on, kept as annotations of their volumes. The
 * version guards (never below the FCV, one series at a time) read the status, which a resource re-created on retained volumes
 * lacks: without these, it could start a binary that cannot read the data (mongod refuses to start on a newer FCV).
 */
public final class VolumeRecords {

    public static final String VERSION = "thermocline.io/mongod-version";
    public static final String FEATURE_COMPATIBILITY_VERSION = "thermocline.io/feature-compatibility-version";
    private static final Logger LOG = Logger.getLogger(VolumeRecords.class);

    /** What the data on the volumes was last run with. */
    public record Recorded(String version, String featureCompatibilityVersion) {
    }

    private VolumeRecords() {
    }

    /** The newest version and FCV the existing member volumes record; empty when none records any. */
    public static Optional<Recorded> read(KubernetesClient client, ClusterLayout layout) {
        List<Map<String, String>> annotations = client.persistentVolumeClaims().inNamespace(layout.namespace()).list().getItems()
                .stream().filter(c -> layout.isMemberClaim(c.getMetadata().getName()))
                .map(c -> Optional.ofNullable(c.getMetadata().getAnnotations()).orElse(Map.of())).toList();
        Comparator<String> bySeries = (a, b) -> VersionPolicy.compareSeries(VersionPolicy.series(a), VersionPolicy.series(b));
        Optional<String> version = annotations.stream().map(a -> a.get(VERSION)).filter(Objects::nonNull).max(bySeries);
        Optional<String> fcv = annotations.stream().map(a -> a.get(FEATURE_COMPATIBILITY_VERSION)).filter(Objects::nonNull)
                .max(VersionPolicy::compareSeries);
        return version.isEmpty() && fcv.isEmpty() ? Optional.empty() : Optional.of(new Recorded(version.orElse(null), fcv.orElse(null)));
    }

    /** Records {@code version} and {@code fcv} on each of the first {@code members} member volumes that says otherwise. */
    public static void write(KubernetesClient client, ClusterLayout layout, int members, String version, String fcv) {
        for (int i = 0; i < members; i++) {
            var resource = client.persistentVolumeClaims().inNamespace(layout.namespace()).withName(layout.memberClaim(i));
            PersistentVolumeClaim claim = resource.get();
            Map<String, String> now = claim == null ? null : Optional.ofNullable(claim.getMetadata().getAnnotations()).orElse(Map.of());
            if (claim == null || (version.equals(now.get(VERSION)) && fcv.equals(now.get(FEATURE_COMPATIBILITY_VERSION)))) {
                continue;
            }
            resource.edit(c -> {
                Map<String, String> annotations = new HashMap<>(Optional.ofNullable(c.getMetadata().getAnnotations()).orElse(Map.of()));
                annotations.put(VERSION, version);
                annotations.put(FEATURE_COMPATIBILITY_VERSION, fcv);
                c.getMetadata().setAnnotations(annotations);
                return c;
            });
            LOG.infof("event=volume-recorded cluster=%s/%s pvc=%s version=%s fcv=%s", layout.namespace(), layout.cluster(),
                    claim.getMetadata().getName(), version, fcv);
        }
    }
}
