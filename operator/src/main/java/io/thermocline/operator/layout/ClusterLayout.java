package io.thermocline.operator.layout;

import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Names, labels and addresses of everything a ThermoclineCluster owns, in one place so
 * dependents, probes and tests agree on them.
 */
public record ClusterLayout(String cluster, String namespace) {

    public static final String MANAGED_BY = "thermocline-operator";
    public static final String COMPONENT = "app.kubernetes.io/component";
    public static final String INSTANCE = "app.kubernetes.io/instance";
    public static final int MONGOD_PORT = 27017;
    public static final int PEER_PORT = 27018;
    public static final int HTTP_PORT = 9090;
    public static final String CONFIG_FILE = "thermocline.yaml";
    public static final String CONFIG_DIR = "/etc/thermocline";
    public static final String ROOT_USER = "thermocline-root";
    public static final String DATA_PLANE_USER = "thermocline";
    /** The component labels of the one-shot Jobs (backup points, restore steps): fast-tier clients like the workers. */
    public static final String BACKUP_POINT_COMPONENT = "backup-point";

    public static final String RESTORE_COMPONENT = "restore";

    public static ClusterLayout of(ThermoclineCluster cluster) {
        return new ClusterLayout(
                cluster.getMetadata().getName(), cluster.getMetadata().getNamespace());
    }

    public String fastTier() {
        return cluster + "-fast";
    }

    /** Replica-set name of the fast tier (the StatefulSet's name). */
    public String replicaSetName() {
        return fastTier();
    }

    public String proxy() {
        return cluster + "-proxy";
    }

    public String proxyPeers() {
        return cluster + "-proxy-peers";
    }

    public String config() {
        return cluster + "-config";
    }

    public String feeder() {
        return cluster + "-feeder";
    }

    public String evictor() {
        return cluster + "-evictor";
    }

    public String warmerPrefix() {
        return cluster + "-warmer-";
    }

    public String keyfileSecret() {
        return cluster + "-keyfile";
    }

    /** The proxy fleet's peer-link key ({@code fleet.secretFile}). */
    public String peerSecret() {
        return cluster + "-peer";
    }

    public String usersSecret() {
        return cluster + "-users";
    }

    /** The fast tier's server certificate, key and CA bundle (the operator's or cert-manager's). */
    public String fastTierTlsSecret() {
        return fastTier() + "-tls";
    }

    /** The proxy's client-facing certificate, when the operator issues it ({@code tls.certificateSecretRef} unset). */
    public String proxyTlsSecret() {
        return proxy() + "-tls";
    }

    /** The operator's CA for the fast tier (certificate and key). */
    public String fastTierCaSecret() {
        return fastTier() + "-ca";
    }

    /** The CAs the data plane trusts for both tiers: the fast tier's and {@code spec.tls.tierCaSecretRef}'s. */
    public String tierCaSecret() {
        return cluster + "-tier-ca";
    }

    /** Stable DNS name of fast-tier member {@code ordinal} through the headless Service. */
    public String memberHost(int ordinal) {
        return fastTier() + "-" + ordinal + "." + fastTier() + "." + namespace + ".svc:" + MONGOD_PORT;
    }

    /** The ordinal of a member host ({@code NAME-fast-N.NAME-fast...}); -1 when it is not one of this cluster's. */
    public int ordinalOf(String host) {
        String prefix = fastTier() + "-";
        int dot = host.indexOf('.');
        if (!host.startsWith(prefix) || dot < 0) {
            return -1;
        }
        try {
            return Integer.parseInt(host.substring(prefix.length(), dot));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The PVC the StatefulSet controller makes for member {@code ordinal} (claim template {@code data}). */
    public String memberClaim(int ordinal) {
        return "data-" + fastTier() + "-" + ordinal;
    }

    /** Whether {@code claim} is one of this fast tier's member PVCs, of any ordinal (scaled-down members' stay). */
    public boolean isMemberClaim(String claim) {
        String prefix = "data-" + fastTier() + "-";
        return claim.startsWith(prefix)
                && claim.length() > prefix.length()
                && claim.substring(prefix.length()).chars().allMatch(Character::isDigit);
    }

    public List<String> memberHosts(int members) {
        List<String> hosts = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            hosts.add(memberHost(i));
        }
        return hosts;
    }

    public String proxyConnectionString(int port) {
        return "mongodb://" + proxy() + "." + namespace + ".svc:" + port + "/";
    }

    public Map<String, String> labels(String component) {
        Map<String, String> labels = new LinkedHashMap<>(selector(component));
        labels.put("app.kubernetes.io/name", "thermocline");
        labels.put("app.kubernetes.io/managed-by", MANAGED_BY);
        return labels;
    }

    /** The immutable subset used in selectors (Deployment/StatefulSet selectors cannot change). */
    public Map<String, String> selector(String component) {
        Map<String, String> selector = new LinkedHashMap<>();
        selector.put(INSTANCE, cluster);
        selector.put(COMPONENT, component);
        return selector;
    }
}
