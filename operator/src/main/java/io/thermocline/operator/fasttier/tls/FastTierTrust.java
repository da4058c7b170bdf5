package io.thermocline.operator.fasttier.tls;

import io.thermocline.operator.layout.ClusterLayout;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;

/**
 * The operator's own connections to a fast tier (replica-set steps, mode document, tiering poll) use
 * TLS once its members all accept it, trusting exactly its CA bundle. The reconcile records it here
 * per fast tier (by the headless Service's domain, which every member host ends with); the MongoDB
 * clients look it up by the hosts they connect to.
 */
public final class FastTierTrust {

    private record Entry(String bundle, SSLContext context) {
    }

    private static final Map<String, Entry> BY_DOMAIN = new ConcurrentHashMap<>();

    private FastTierTrust() {
    }

    /** {@code bundle} null: plain text to this fast tier. */
    public static void record(ClusterLayout layout, String bundle) {
        String domain = domain(layout.memberHost(0));
        if (bundle == null) {
            BY_DOMAIN.remove(domain);
            return;
        }
        BY_DOMAIN.compute(domain, (d, e) -> e != null && e.bundle().equals(bundle) ? e : new Entry(bundle, Pem.trusting(bundle)));
    }

    public static boolean tls(ClusterLayout layout) {
        return BY_DOMAIN.containsKey(domain(layout.memberHost(0)));
    }

    /** The context for a client of {@code hosts} ({@code host:port}), if that fast tier speaks TLS. */
    public static Optional<SSLContext> forHosts(List<String> hosts) {
        return hosts.isEmpty() ? Optional.empty() : Optional.ofNullable(BY_DOMAIN.get(domain(hosts.get(0)))).map(Entry::context);
    }

    private static String domain(String host) {
        String name = host.contains(":") ? host.substring(0, host.lastIndexOf(':')) : host;
        return name.substring(name.indexOf('.') + 1);
    }
}
