package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How the proxy Service is reached (as Percona's {@code expose}). The API server refuses a Service whose
 * {@code loadBalancerSourceRanges} or {@code externalTrafficPolicy} do not fit its type, and the operator's later
 * update would then fail: the CRD refuses such a spec at admission ({@link #problems()} says the same where CEL is off).
 */
@ValidationRule(value = "self.type == 'LoadBalancer' || !has(self.loadBalancerSourceRanges) || size(self.loadBalancerSourceRanges) == 0",
        message = "proxy.expose.loadBalancerSourceRanges needs proxy.expose.type LoadBalancer")
@ValidationRule(value = "self.type != 'ClusterIP' || !has(self.externalTrafficPolicy)",
        message = "proxy.expose.externalTrafficPolicy needs proxy.expose.type NodePort or LoadBalancer")
public class ExposeSpec {

    public static final String CLUSTER_IP = "ClusterIP";
    public static final String LOAD_BALANCER = "LoadBalancer";
    /** An IPv4 or IPv6 CIDR, as the Service's loadBalancerSourceRanges takes it (the CRD's pattern and Java's agree on it). */
    public static final String CIDR = "^(([0-9]{1,3}[.]){3}[0-9]{1,3}/[0-9]{1,2}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*/[0-9]{1,3})$";

    @Pattern("^(ClusterIP|NodePort|LoadBalancer)$")
    @Default(CLUSTER_IP)
    @JsonPropertyDescription("Service type: ClusterIP (inside the cluster only, the default), NodePort or LoadBalancer.")
    public String type = CLUSTER_IP;

    @JsonPropertyDescription("Annotations of the proxy Service, e.g. a cloud load balancer's (internal, TLS, health checks).")
    public Map<String, String> annotations = new LinkedHashMap<>();

    // a pattern on the items, not a CEL rule: the API server estimates a rule's cost from its strings' longest length
    @Size(max = 64)
    @JsonPropertyDescription("With type LoadBalancer: the client CIDRs the load balancer admits (e.g. 10.0.0.0/8, 2001:db8::/32); empty: any.")
    public List<@Size(max = 64) @Pattern(CIDR) String> loadBalancerSourceRanges = new ArrayList<>();

    @Pattern("^(Cluster|Local)$")
    @JsonPropertyDescription("With type NodePort or LoadBalancer: Local keeps the clients' source addresses and sends traffic only to"
            + " proxies on the receiving node; Cluster (Kubernetes' default) spreads it over every proxy.")
    public String externalTrafficPolicy;

    /** What the CRD's rules refuse, for an API server that does not run them; empty when all is well. */
    @JsonIgnore
    public List<String> problems() {
        List<String> problems = new ArrayList<>();
        String kind = type == null ? CLUSTER_IP : type;
        if (!LOAD_BALANCER.equals(kind) && loadBalancerSourceRanges != null && !loadBalancerSourceRanges.isEmpty()) {
            problems.add("proxy.expose.loadBalancerSourceRanges needs proxy.expose.type LoadBalancer");
        }
        if (CLUSTER_IP.equals(kind) && externalTrafficPolicy != null) {
            problems.add("proxy.expose.externalTrafficPolicy needs proxy.expose.type NodePort or LoadBalancer");
        }
        if (loadBalancerSourceRanges != null) {
            loadBalancerSourceRanges.stream().filter(r -> r == null || !r.matches(CIDR)).forEach(r ->
                    problems.add("proxy.expose.loadBalancerSourceRanges holds " + r + ", not a CIDR (e.g. 10.0.0.0/8)"));
        }
        return problems;
    }
}
