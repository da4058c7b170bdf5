package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import java.util.ArrayList;
import java.util.List;

/** The fast-tier replica set: a StatefulSet running mongod. */
public class FastTierSpec extends PodPlacement {

    /**
     * mongod options the operator sets itself (mongod refuses an option given twice) or that would break the member: one
     * regular expression, the same in the CRD's rule and in {@code MongodArgs} (CEL and Java agree on it).
     */
    public static final String MONGOD_ARGS_OWNED = "^--(replSet|port|bind_ip|bind_ip_all|keyFile|clusterAuthMode|transitionToAuth"
            + "|auth|noauth|tls[A-Za-z]*|ssl[A-Za-z]*|dbpath|config|fork|logpath|logappend|syslog|storageEngine|wiredTigerCacheSizeGB"
            + "|outputConfig)(=.*)?$";

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

    // bounded lengths keep the rule's estimated cost within the API server's budget
    @Size(max = 40)
    @ValidationRule(value = "self.all(a, !a.matches('" + MONGOD_ARGS_OWNED + "'))",
            message = "fastTier.mongodArgs may not set what the operator sets (replica set, port, bind address, keyfile and"
                    + " authentication, TLS, data path, config file, fork, log path, storage engine, WiredTiger cache: size that with"
                    + " resources.limits.memory)")
    @JsonPropertyDescription("More mongod command-line options for every member, passed as they are, e.g. [\"--setParameter\","
            + " \"diagnosticDataCollectionEnabled=false\", \"--slowms\", \"200\", \"--oplogSize\", \"20480\"]. Changing them"
            + " restarts the members one at a time. Options the operator sets are refused.")
    public List<@Size(max = 1024) String> mongodArgs = new ArrayList<>();

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
