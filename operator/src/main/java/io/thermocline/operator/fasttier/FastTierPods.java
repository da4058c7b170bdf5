package io.thermocline.operator.fasttier;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * What the StatefulSet's pods tell the replica-set steps, and what those steps ask of them:
 * which pods run an older template, how many pods the StatefulSet may keep, which pod to restart.
 */
public final class FastTierPods {

    private static final Logger LOG = Logger.getLogger(FastTierPods.class);

    private FastTierPods() {
    }

    /**
     * The StatefulSet's replicas: growing at once, but shrinking only by one member per reconcile,
     * and only once that member is out of the replica-set configuration (a pod that goes while its
     * member is configured costs a vote, and with it possibly the majority).
     */
    public static int replicas(ClusterLayout layout, int wanted, int running, ReplicaSetState state, boolean initiatedEver) {
        if (running <= wanted) {
            return wanted;
        }
        if (!initiatedEver && (state == null || !state.initiated())) {
            return wanted; // never initiated: there is no data and no majority to keep
        }
        if (state == null || !state.initiated()) {
            return running; // the configuration cannot be read now: shrink nothing
        }
        int highest = state.configured().stream().mapToInt(layout::ordinalOf).max().orElse(running - 1);
        return highest < running - 1 ? Math.max(wanted, running - 1) : running;
    }

    /** Hosts whose pod was made from another pod template than the StatefulSet's current one. */
    public static Set<String> outdated(KubernetesClient client, ClusterLayout layout, StatefulSet statefulSet) {
        Set<String> outdated = new HashSet<>();
        if (statefulSet == null) {
            return outdated;
        }
        String wanted = annotation(statefulSet.getSpec().getTemplate().getMetadata().getAnnotations());
        for (Pod pod : client.pods().inNamespace(layout.namespace())
                .withLabels(layout.selector(FastTierStatefulSetDependent.COMPONENT)).list().getItems()) {
            if (wanted != null && !wanted.equals(annotation(pod.getMetadata().getAnnotations()))) {
                outdated.add(layout.memberHost(ordinal(pod.getMetadata().getName())));
            }
        }
        return outdated;
    }

    /** Pods made from the StatefulSet's current template: what runs, beside what was asked. */
    public static int upToDate(KubernetesClient client, ClusterLayout layout, StatefulSet statefulSet) {
        if (statefulSet == null) {
            return 0;
        }
        String wanted = annotation(statefulSet.getSpec().getTemplate().getMetadata().getAnnotations());
        return (int) client.pods().inNamespace(layout.namespace())
                .withLabels(layout.selector(FastTierStatefulSetDependent.COMPONENT)).list().getItems().stream()
                .filter(pod -> wanted != null && wanted.equals(annotation(pod.getMetadata().getAnnotations())))
                .count();
    }

    /** The mongod version of the StatefulSet's template (its image tag). */
    public static String version(StatefulSet statefulSet) {
        String image = statefulSet.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> "mongod".equals(c.getName())).findFirst().map(c -> c.getImage()).orElse("");
        return image.substring(image.lastIndexOf(':') + 1);
    }

    /** Volume claim templates are immutable: an existing StatefulSet keeps its size (PVCs are expanded instead). */
    public static String claimSize(StatefulSet current, String wanted) {
        return Optional.ofNullable(current)
                .flatMap(s -> s.getSpec().getVolumeClaimTemplates().stream().findFirst())
                .map(c -> c.getSpec().getResources().getRequests().get("storage"))
                .map(Object::toString).orElse(wanted);
    }

    /** Deletes the member's pod; the StatefulSet (OnDelete) makes it again from the current template. */
    public static void restart(KubernetesClient client, ClusterLayout layout, String host) {
        String pod = host.substring(0, host.indexOf('.'));
        LOG.infof("event=member-restarted cluster=%s/%s pod=%s", layout.namespace(), layout.cluster(), pod);
        client.pods().inNamespace(layout.namespace()).withName(pod).delete();
    }

    private static String annotation(Map<String, String> annotations) {
        return annotations == null ? null : annotations.get(FastTierStatefulSetDependent.TEMPLATE_HASH);
    }

    private static int ordinal(String podName) {
        return Integer.parseInt(podName.substring(podName.lastIndexOf('-') + 1));
    }
}
