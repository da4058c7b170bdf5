package io.thermocline.config;

import java.util.List;
import java.util.Optional;

/**
 * The one configuration of every data-plane process (proxy, feeder, evictor, warmer,
 * embedded default). The operator renders it into the proxy's ConfigMap with
 * {@link ConfigWriter}, so there is exactly one schema.
 */
public record ThermoclineConfig(
        ProxyConfig proxy,
        TiersConfig tiers,
        FleetConfig fleet,
        List<CollectionPolicy> collections,
        FeederConfig feeder,
        EvictorConfig evictor,
        WarmerConfig warmer,
        AuthConfig auth,
        TlsConfig tls,
        Mode mode,
        ShadowConfig shadow) {

    public ThermoclineConfig {
        collections = collections == null ? List.of() : List.copyOf(collections);
        auth = auth == null ? AuthConfig.defaults() : auth;
        tls = tls == null ? TlsConfig.defaults() : tls;
        mode = mode == null ? Mode.TIERED : mode;
        shadow = shadow == null ? ShadowConfig.defaults() : shadow;
    }

    /** The schema before {@code mode} and {@code shadow}: tiered, default sampling. */
    public ThermoclineConfig(ProxyConfig proxy, TiersConfig tiers, FleetConfig fleet, List<CollectionPolicy> collections,
                             FeederConfig feeder, EvictorConfig evictor, WarmerConfig warmer, AuthConfig auth, TlsConfig tls) {
        this(proxy, tiers, fleet, collections, feeder, evictor, warmer, auth, tls, Mode.TIERED, ShadowConfig.defaults());
    }

    /** The schema before {@code auth} and {@code tls}: authentication required, users from the archive, no TLS. */
    public ThermoclineConfig(ProxyConfig proxy, TiersConfig tiers, FleetConfig fleet, List<CollectionPolicy> collections,
                             FeederConfig feeder, EvictorConfig evictor, WarmerConfig warmer) {
        this(proxy, tiers, fleet, collections, feeder, evictor, warmer, AuthConfig.defaults(), TlsConfig.defaults());
    }

    public ThermoclineConfig withSecurity(AuthConfig newAuth, TlsConfig newTls) {
        return new ThermoclineConfig(proxy, tiers, fleet, collections, feeder, evictor, warmer, newAuth, newTls, mode, shadow);
    }

    public ThermoclineConfig withMode(Mode newMode, ShadowConfig newShadow) {
        return new ThermoclineConfig(proxy, tiers, fleet, collections, feeder, evictor, warmer, auth, tls, newMode, newShadow);
    }

    /** The tiering policy of a namespace ({@code db.collection}), if it is tiered. */
    public Optional<CollectionPolicy> policyFor(String namespace) {
        return collections.stream().filter(p -> p.namespace().equals(namespace)).findFirst();
    }
}
