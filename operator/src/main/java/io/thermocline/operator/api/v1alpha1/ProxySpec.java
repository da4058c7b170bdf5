package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.kubernetes.api.model.ResourceRequirements;

/** The proxy fleet: a Deployment behind one Service. */
public class ProxySpec extends PodPlacement {

    @Min(1)
    @Max(100)
    @Default("2")
    @JsonPropertyDescription("Proxy replicas; each gets an equal share of the connection budgets.")
    public int replicas = 2;

    @Min(1)
    @Max(65535)
    @Default("27017")
    @JsonPropertyDescription("Port of the proxy Service applications connect to.")
    public int port = 27017;

    @Min(1)
    @Default("10000")
    @JsonPropertyDescription("Client connections one proxy replica accepts; beyond it clients get a clear MongoDB error.")
    public int maxClientConnections = 10_000;

    @Pattern("^(linearizable|session)$")
    @Default("linearizable")
    @JsonPropertyDescription("What a read the proxy sends to the archive waits for: 'linearizable' (every write acknowledged"
            + " before the read, from any client or proxy; the default) or 'session' (only the writes the client's causally"
            + " consistent session has seen; lower latency). The proxy's proxy.readConsistency.")
    public String readConsistency = "linearizable";

    @JsonPropertyDescription("Backend connections the whole fleet may open to each member of each tier.")
    public ConnectionBudgetSpec connectionBudget = new ConnectionBudgetSpec();

    @JsonPropertyDescription("CPU and memory of each proxy.")
    public ResourceRequirements resources;

    @JsonPropertyDescription("How applications reach the proxy Service: its type (ClusterIP by default; NodePort or LoadBalancer from"
            + " outside the cluster), annotations, load balancer source ranges and external traffic policy.")
    public ExposeSpec expose = new ExposeSpec();

    /** Per-tier backend connection budgets, divided among proxy replicas. */
    public static class ConnectionBudgetSpec {

        @Min(1)
        @Default("200")
        @JsonPropertyDescription("Connections to each fast-tier member, for the whole fleet.")
        public int fastTier = 200;

        @Min(1)
        @Default("100")
        @JsonPropertyDescription("Connections to each archive member, for the whole fleet.")
        public int archive = 100;
    }
}
