package io.thermocline.operator.dataplane;

import io.thermocline.config.AuthConfig;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ConfigWriter;
import io.thermocline.config.Durations;
import io.thermocline.config.EvictorConfig;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.FleetConfig;
import io.thermocline.config.ProxyConfig;
import io.thermocline.config.ReadConsistency;
import io.thermocline.config.SecondaryReads;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.TierConfig;
import io.thermocline.config.TiersConfig;
import io.thermocline.config.TlsConfig;
import io.thermocline.config.WarmerConfig;
import io.thermocline.operator.api.v1alpha1.AuthSpec;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.TlsSpec;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.layout.ContentHash;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Renders a ThermoclineCluster into the data plane's own config schema
 * ({@code io.thermocline.config}). Connection strings are left out of the file: they carry
 * passwords, so pods get them from Secrets as {@code THERMOCLINE_TIERS_*_URI} overrides.
 */
public final class DataPlaneConfig {

    public static final String ARCHIVE_URI_ENV = "THERMOCLINE_TIERS_ARCHIVE_URI";
    public static final String FAST_URI_ENV = "THERMOCLINE_TIERS_FAST_URI";

    private DataPlaneConfig() {}

    /** How long a proxy waits for requests in flight after SIGTERM; its pods' grace period is sized from it. */
    public static java.time.Duration proxyDrainTimeout() {
        return ProxyConfig.defaults().drainTimeout();
    }

    public static ThermoclineConfig render(ThermoclineClusterSpec spec, ClusterLayout layout) {
        ProxyConfig defaults = ProxyConfig.defaults();
        ProxyConfig proxy = new ProxyConfig(
                "0.0.0.0",
                ClusterLayout.MONGOD_PORT,
                "0.0.0.0",
                ClusterLayout.HTTP_PORT,
                spec.proxy.maxClientConnections,
                defaults.maxMessageSizeBytes(),
                defaults.causalWaitTimeout(),
                ReadConsistency.parse(spec.proxy.readConsistency == null ? "linearizable" : spec.proxy.readConsistency),
                proxyDrainTimeout(),
                defaults.compressors(),
                defaults.transport());
        TiersConfig tiers = new TiersConfig(
                new TierConfig(null, spec.proxy.connectionBudget.fastTier),
                new TierConfig(null, spec.proxy.connectionBudget.archive));
        // instanceId stays unset: each proxy takes its pod name (HOSTNAME), so cursor ids name their owner
        FleetConfig fleet = new FleetConfig(
                spec.proxy.replicas,
                null,
                layout.proxyPeers() + "." + layout.namespace() + ".svc",
                ClusterLayout.PEER_PORT,
                null,
                DataPlaneMounts.PEER_SECRET_FILE);
        List<CollectionPolicy> collections = spec.collections.stream()
                .map(c -> new CollectionPolicy(
                        c.database,
                        c.collection,
                        c.ageField,
                        Durations.parse(c.hotWindow),
                        SecondaryReads.parse(c.secondaryReads == null ? "primary" : c.secondaryReads)))
                .toList();
        FeederConfig feeder = new FeederConfig(
                spec.feeder.batchSize, Durations.parse(spec.feeder.maxBatchWait), spec.feeder.coalesce);
        EvictorConfig evictor = new EvictorConfig(
                EvictorConfig.defaults().interval(), spec.evictor.batchSize, spec.evictor.maxDocumentsPerSecond);
        WarmerConfig warmer = new WarmerConfig(spec.warmer.batchSize, spec.warmer.maxDocumentsPerSecond);
        return new ThermoclineConfig(
                proxy, tiers, fleet, collections, feeder, evictor, warmer, auth(spec.auth), tls(spec.tls));
    }

    /** The proxy's client authentication; the users file is the mounted {@code auth.usersSecretRef}. */
    static AuthConfig auth(AuthSpec spec) {
        AuthConfig defaults = AuthConfig.defaults();
        AuthSpec auth = spec == null ? new AuthSpec() : spec;
        String usersFile = auth.usesFile() && auth.usersSecretRef != null
                ? DataPlaneMounts.USERS_DIR + "/" + auth.usersSecretRef.keyOr(AuthSpec.DEFAULT_USERS_KEY)
                : null;
        return new AuthConfig(
                auth.mode,
                auth.users,
                usersFile,
                defaults.refreshInterval(),
                defaults.missRetryInterval(),
                defaults.failedLoginDelay(),
                defaults.maxFailedLoginDelay());
    }

    /** Client TLS from the mounted certificate Secret; the tiers' CA from the mounted {@code tls.tierCaSecretRef}. */
    static TlsConfig tls(TlsSpec spec) {
        TlsSpec tls = spec == null ? new TlsSpec() : spec;
        boolean serving =
                (tls.certificateSecretRef != null || tls.proxyCertificateGenerated()) && !"disabled".equals(tls.mode);
        return new TlsConfig(
                tls.mode,
                serving ? DataPlaneMounts.CERTIFICATE_DIR + "/tls.crt" : null,
                serving ? DataPlaneMounts.CERTIFICATE_DIR + "/tls.key" : null,
                tls.clientCaSecretRef == null
                        ? null
                        : DataPlaneMounts.CLIENT_CA_DIR + "/" + tls.clientCaSecretRef.keyOr(TlsSpec.DEFAULT_CA_KEY),
                tls.tierCaSecretRef == null
                        ? null
                        : DataPlaneMounts.TIER_CA_DIR + "/" + tls.tierCaSecretRef.keyOr(TlsSpec.DEFAULT_CA_KEY));
    }

    public static String toYaml(ThermoclineClusterSpec spec, ClusterLayout layout) {
        return ConfigWriter.toYaml(render(spec, layout));
    }

    /** The environment the data-plane pods add to the file; used to validate a rendered config like a pod would. */
    public static Map<String, String> podEnvironment(String archiveUri, String fastUri) {
        return Map.of(ARCHIVE_URI_ENV, archiveUri, FAST_URI_ENV, fastUri, "HOSTNAME", "validation-0");
    }

    /**
     * The warmer Job's name: the windows' hash, so a changed window (or a new collection)
     * yields a new Job and thus a new warming run, while an unchanged one is left alone.
     */
    public static String warmerJobName(ThermoclineClusterSpec spec, ClusterLayout layout) {
        return warmerJobName(spec, layout, null);
    }

    /**
     * {@code restored}: the last restore whose resync emptied the fast tier (null: none), so a warmer runs again after
     * it; without one, the name is the windows' alone, as before restores existed.
     */
    public static String warmerJobName(ThermoclineClusterSpec spec, ClusterLayout layout, String restored) {
        String windows =
                spec.collections.stream().map(DataPlaneConfig::window).sorted().collect(Collectors.joining(";"));
        return layout.warmerPrefix()
                + ContentHash.of(windows + (restored == null ? "" : "\nrestored " + restored))
                        .substring(0, 10);
    }

    private static String window(CollectionSpec c) {
        return c.database + "." + c.collection + "|" + c.ageField + "|"
                + Durations.parse(c.hotWindow).toSeconds();
    }
}
