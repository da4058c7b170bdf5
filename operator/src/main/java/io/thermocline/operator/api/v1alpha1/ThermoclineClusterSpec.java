package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.ArrayList;
import java.util.List;

/** What the user asks for; the operator never writes it (GitOps owns the spec). */
public class ThermoclineClusterSpec {

    @Required
    @JsonPropertyDescription("The existing replica set that becomes the archive tier.")
    public ArchiveSpec archive = new ArchiveSpec();

    @JsonPropertyDescription(
            "Data-plane image (proxy, feeder, evictor, warmer). Empty: the operator's default, ghcr.io/thermocline/thermocline:<operator version>.")
    public String image;

    @JsonPropertyDescription("The fast-tier replica set the operator creates.")
    public FastTierSpec fastTier = new FastTierSpec();

    @JsonPropertyDescription("The proxy fleet applications connect to.")
    public ProxySpec proxy = new ProxySpec();

    @JsonPropertyDescription(
            "How the proxy authenticates applications. Default: required, with the archive's own users.")
    public AuthSpec auth = new AuthSpec();

    @JsonPropertyDescription("TLS: clients to the proxy, and the CA of the tiers' certificates. Default: none.")
    public TlsSpec tls = new TlsSpec();

    @JsonPropertyDescription("Tiered collections. Collections not listed pass through to the archive unchanged.")
    @Size(max = 100)
    @ValidationRule(
            value = "self.all(c, self.exists_one(d, d.database == c.database && d.collection == c.collection))",
            message = "each database/collection may appear only once in collections")
    public List<CollectionSpec> collections = new ArrayList<>();

    @JsonPropertyDescription("The feeder mirrors every fast-tier write to the archive.")
    public FeederSpec feeder = new FeederSpec();

    @JsonPropertyDescription(
            "The evictor removes from the fast tier what is older than its window and safe in the archive.")
    public EvictorSpec evictor = new EvictorSpec();

    @JsonPropertyDescription("The warmer fills the fast tier with archive documents inside the window.")
    public WarmerSpec warmer = new WarmerSpec();

    @Default("false")
    @JsonPropertyDescription(
            "Stops the data plane for maintenance: proxy and feeder scaled to 0, evictor and warmer suspended; fast-tier data is kept. Not a hand-back: do not write to the archive directly while paused (use mode: draining for that).")
    public boolean paused;

    // no CRD default: an unset mode must stay distinguishable from one the user chose (status.mode.source)
    @JsonPropertyDescription(
            "What the data plane does with traffic: shadow (the archive answers everything, the fast tier is compared out of band), tiered (the fast tier answers what its windows cover) or draining (the archive becomes authoritative again; status says Drained when applications can go back to it). Unset: a new cluster starts in shadow when the archive's tiered collections already hold documents (tiered when they are empty), and the fleet then keeps the mode it has (status.mode.source: default). Changing it restarts nothing.")
    public ClusterMode mode;

    @Default("false")
    @JsonPropertyDescription(
            "Cut over from shadow to tiered even though the shadow evidence (warmed windows, no recent divergence) is not in.")
    public boolean modeOverride;

    @JsonPropertyDescription(
            "Asks for a backup point: the archive time after which an archive backup holds every write acknowledged before the request (thermocline backup-point). Result in status.backupPoint.")
    public BackupPointSpec backupPoint;

    @JsonPropertyDescription(
            "Restores the archive from a backup under the running fleet: step hold before the archive's own restore, resync after it (docs/backup.md, Kubernetes). Progress in status.restore and the Restoring condition.")
    public RestoreSpec restore;
}
