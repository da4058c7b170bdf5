package io.thermocline.operator.proxy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Why the proxy is not ready, in the data plane's words (issue 41 item 4): the first not-ready proxy pods (at most two, by
 * name) are asked for their {@code /health/ready} text, so ProxyReady says "the archive tier refused the proxy's login:
 * Authentication failed" rather than a count.
 */
public final class ProxyPods {

    private static final int ASKED = 2;
    private static final int MAX_CAUSE = 400;

    private ProxyPods() {}

    /** {@code pod NAME: not ready: ...}, or null when no not-ready pod answered. */
    public static String notReadyCause(KubernetesClient client, ClusterLayout layout, ProxyHealth health) {
        List<Pod> pods = client.pods()
                .inNamespace(layout.namespace())
                .withLabels(layout.selector(ProxyDeploymentDependent.COMPONENT))
                .list()
                .getItems();
        return pods.stream()
                .filter(p -> p.getStatus() != null && p.getStatus().getPodIP() != null && !ready(p))
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .limit(ASKED)
                .map(p -> health.notReady(p.getStatus().getPodIP(), ClusterLayout.HTTP_PORT)
                        .map(text -> "pod " + p.getMetadata().getName() + ": " + bounded(text)))
                .flatMap(Optional::stream)
                .findFirst()
                .orElse(null);
    }

    private static boolean ready(Pod pod) {
        return pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static String bounded(String text) {
        String line = text.replace('\n', ' ').strip();
        return line.length() > MAX_CAUSE ? line.substring(0, MAX_CAUSE) + "..." : line;
    }
}
