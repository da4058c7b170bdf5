package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What the operator observed; written only by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ThermoclineClusterStatus {

    @JsonPropertyDescription("The metadata.generation this status describes.")
    public Long observedGeneration;

    @JsonPropertyDescription("Short summary: Pending, Progressing, Ready, Degraded, Paused or Failed.")
    public String phase;

    @JsonPropertyDescription(
            "Ready, ArchiveReachable, VersionCompatible, FastTierReady, ProxyReady, FeederHealthy, ResourcesApplied, Warmed, ModeActive, Drained, FollowerHealthy, CertificatesReady, BackupPointReached, Restoring.")
    public List<Condition> conditions = new ArrayList<>();

    @JsonPropertyDescription(
            "Connection string applications use instead of the archive's (credentials as for the archive).")
    public String connectionString;

    @JsonPropertyDescription("MongoDB version the archive reports.")
    public String archiveVersion;

    @JsonPropertyDescription("MongoDB version the fast tier runs.")
    public String fastTierVersion;

    @JsonPropertyDescription("featureCompatibilityVersion of the fast tier, as its primary reports it.")
    public String featureCompatibilityVersion;

    @JsonPropertyDescription(
            "True once the operator initiated the fast-tier replica set (or found it initiated): it is never initiated again.")
    public Boolean replicaSetInitiated;

    @JsonPropertyDescription("Fast-tier members ready (PRIMARY or SECONDARY) / wanted, e.g. 3/3.")
    public String members;

    @JsonPropertyDescription(
            "Members whose pod runs the StatefulSet's current template / members, e.g. 2/3 during a rolling restart.")
    public String membersUpdated;

    @JsonPropertyDescription("Proxy replicas ready / wanted, e.g. 2/2.")
    public String proxies;

    @JsonPropertyDescription(
            "Seconds between the fast tier's last write and what the feeder has mirrored to the archive.")
    public Long feederLagSeconds;

    @JsonPropertyDescription("Documents in the tiered collections, per tier.")
    public DocumentCounts documents;

    @JsonPropertyDescription(
            "Things that work but not as one might expect, e.g. a unique secondary index of a tiered collection that only the archive has (the proxy enforces the fast tier's unique indexes across both tiers).")
    public List<String> warnings;

    @JsonPropertyDescription("Name of the warmer Job of the current windows.")
    public String warmerJob;

    @JsonPropertyDescription(
            "The fleet's mode (shadow, tiered, draining), its phase, the shadow evidence and the drain progress.")
    public ModeStatus mode;

    @JsonPropertyDescription("The last backup point spec.backupPoint asked for.")
    public BackupPointStatus backupPoint;

    @JsonPropertyDescription("The last restore spec.restore asked for.")
    public RestoreStatus restore;

    /** Estimated document counts of the tiered collections. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class DocumentCounts {
        public Long fastTier;
        public Long archive;

        public DocumentCounts() {}

        public DocumentCounts(Long fastTier, Long archive) {
            this.fastTier = fastTier;
            this.archive = archive;
        }
    }
}
