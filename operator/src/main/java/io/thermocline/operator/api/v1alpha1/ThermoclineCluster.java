package io.thermocline.operator.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.model.annotation.Group;
import io.fabric8.kubernetes.model.annotation.ShortNames;
import io.fabric8.kubernetes.model.annotation.Version;
import java.util.List;

/** One tiered deployment: a fast tier and a proxy fleet in front of an existing archive replica set. */
@Group(ThermoclineCluster.GROUP)
@Version(ThermoclineCluster.VERSION)
@ShortNames({"tc", "thermocline"})
// the longest derived name, the evictor CronJob NAME-evictor, may have at most 52 characters
@ValidationRule(value = "self.metadata.name.size() <= " + ThermoclineCluster.MAX_NAME_LENGTH,
        message = "metadata.name may have at most 44 characters: the objects derived from it (NAME-evictor, NAME-warmer-<hash>) must fit Kubernetes' limits")
// the name is the prefix of Service names (NAME-proxy, NAME-fast): a DNS-1035 label, which a resource name (a DNS subdomain) need not be
@ValidationRule(value = "self.metadata.name.matches('" + ThermoclineCluster.NAME_PATTERN + "')",
        message = "metadata.name must start with a lowercase letter and hold only lowercase letters, digits and '-' (no '.'),"
                + " ending with a letter or digit: it prefixes the cluster's Service names (NAME-proxy, NAME-fast)")
@AdditionalPrinterColumn(name = "Phase", jsonPath = ".status.phase", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Ready", jsonPath = ".status.conditions[?(@.type==\"Ready\")].status",
        type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Mode", jsonPath = ".status.mode.active", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "ModePhase", jsonPath = ".status.mode.phase", type = AdditionalPrinterColumn.Type.STRING)
// spec or default: whether spec.mode named the mode or the operator chose it (a new cluster over an archive with data starts in shadow)
@AdditionalPrinterColumn(name = "ModeSource", jsonPath = ".status.mode.source", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Members", jsonPath = ".status.members", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Proxies", jsonPath = ".status.proxies", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Updated", jsonPath = ".status.membersUpdated", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Version", jsonPath = ".status.fastTierVersion", type = AdditionalPrinterColumn.Type.STRING)
@AdditionalPrinterColumn(name = "Lag(s)", jsonPath = ".status.feederLagSeconds", type = AdditionalPrinterColumn.Type.INTEGER)
@AdditionalPrinterColumn(name = "Connection", jsonPath = ".status.connectionString", type = AdditionalPrinterColumn.Type.STRING,
        priority = 1)
@AdditionalPrinterColumn(name = "Age", jsonPath = ".metadata.creationTimestamp", type = AdditionalPrinterColumn.Type.DATE)
public class ThermoclineCluster extends CustomResource<ThermoclineClusterSpec, ThermoclineClusterStatus> implements Namespaced {

    public static final String GROUP = "thermocline.io";
    public static final String VERSION = "v1alpha1";
    public static final int MAX_NAME_LENGTH = 44;
    /** A DNS-1035 label, as a Service name must be (CEL's and Java's regular expressions agree on this one). */
    public static final String NAME_PATTERN = "^[a-z]([-a-z0-9]*[a-z0-9])?$";
    public static final String KIND = "ThermoclineCluster";
    /**
     * The order {@code kubectl get tc} shows the columns in (docs/operator.md). The CRD generator
     * sorts them by name; crds/ holds the generated CRD with its columns in this order (CrdTest).
     */
    public static final List<String> PRINTER_COLUMNS = List.of(
            "Phase", "Ready", "Mode", "ModePhase", "ModeSource", "Members", "Updated", "Proxies", "Version", "Lag(s)", "Age", "Connection");

    @Override
    protected ThermoclineClusterSpec initSpec() {
        return new ThermoclineClusterSpec();
    }
}
