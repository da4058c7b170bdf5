package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The fast-tier replica set: a StatefulSet running mongod. */
public class FastTierSpec {

    public static final String AUTOMATIC_VERSION = "auto";

    @Min(1)
    @Max(7)
    @Default("3")
    @JsonPropertyDescription("Replica-set members (1 to 7; 3 survives the loss of one). With 1 or 2 no member can be spared:"
            + " a node drain or a node failure stops writes until the member is back (the disruption budget lets one go at a time).")
    public int members = 3;

    @Pattern("^(auto|[0-9]+\\.[0-9]+\\.[0-9]+)$")
    @Default(AUTOMATIC_VERSION)
    @JsonPropertyDescription("MongoDB version of the fast tier: 'auto' runs the archive's exact version; a pinned x.y.z must have the archive's major.minor.")
    public String version = AUTOMATIC_VERSION;

    @Pattern("^(auto|[0-9]+\\.[0-9]+)$")
    @JsonPropertyDescription("featureCompatibilityVersion to raise the fast tier to: unset (default) leaves it where it is (a new replica"
            + " set starts at its binary's); x.y raises it once every member runs x.y or later; auto follows the running binary."
            + " While it stays below the binary's series, the binary can be rolled back to that series.")
    public String featureCompatibilityVersion;

    @Pattern("^[^:@\\s]+$")
    @Default("mongo")
    @JsonPropertyDescription("mongod image repository; the tag is the version.")
    public String imageRepository = "mongo";

    // a StatefulSet's volume claim templates are immutable, and a volume keeps its class: refused at admission, not later
    @ValidationRule(value = "has(self.storageClassName) == has(oldSelf.storageClassName)"
            + " && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",
            message = "fastTier.storage.storageClassName cannot change: the members' volumes keep their StorageClass (a StatefulSet's"
                    + " volume claim templates are immutable); to move the fast tier to another class, delete the resource with"
                    + " retentionPolicy Retain, move the data, and create it again")
    @JsonPropertyDescription("Persistent storage of each member.")
    public StorageSpec storage = new StorageSpec();

    @JsonPropertyDescription("CPU and memory of each mongod; unset: requests 250m CPU and 1Gi memory, limit 1Gi memory (the WiredTiger"
            + " cache is sized from the memory limit). Set it for production.")
    public ResourceRequirements resources;

    @JsonPropertyDescription("Node selector of the mongod pods.")
    public Map<String, String> nodeSelector = new LinkedHashMap<>();

    @JsonPropertyDescription("Tolerations of the mongod pods.")
    public List<Toleration> tolerations = new ArrayList<>();

    @JsonPropertyDescription("Affinity of the mongod pods; empty: members are spread over nodes as spreadMembers says.")
    public Affinity affinity;

    public static final String SPREAD_REQUIRED = "required";
    public static final String SPREAD_PREFERRED = "preferred";

    @Pattern("^(required|preferred)$")
    @Default(SPREAD_REQUIRED)
    @JsonPropertyDescription("Without an affinity: 'required' (default) puts no two members on one node (a member stays Pending"
            + " rather than share one: two members on a node that fails lose the majority); 'preferred' lets them share"
            + " when nodes are short (test clusters).")
    public String spreadMembers = SPREAD_REQUIRED;

    /**
     * What each mongod gets when {@link #resources} is unset: a memory limit (mongod would size its cache from the node's memory
     * and be OOM-killed) equal to the request (a database pod is not evicted first under memory pressure), no CPU limit
     * (throttling stalls replication heartbeats).
     */
    public ResourceRequirements resourcesOrDefault() {
        if (resources != null) {
            return resources;
        }
        return new ResourceRequirementsBuilder()
                .addToRequests("cpu", new Quantity("250m")).addToRequests("memory", new Quantity("1Gi"))
                .addToLimits("memory", new Quantity("1Gi"))
                .build();
    }

    public boolean automaticVersion() {
        return version == null || version.isBlank() || AUTOMATIC_VERSION.equals(version);
    }

    /** Volume of each member and what happens to it when the resource is deleted. */
    public static class StorageSpec {

        @Pattern("^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|K|M|G|T|P)?$")
        @Default("10Gi")
        @JsonPropertyDescription("Size of each member's volume, e.g. 10Gi.")
        public String size = "10Gi";

        @JsonPropertyDescription("StorageClass of the volumes; empty: the cluster default. Cannot change once set (nor be set later).")
        public String storageClassName;

        @Pattern("^(Retain|Delete)$")
        @Default("Retain")
        @JsonPropertyDescription("Retain (default) keeps the fast-tier volumes when the resource is deleted; Delete removes them, after the feeder has mirrored everything.")
        public String retentionPolicy = "Retain";
    }
}
