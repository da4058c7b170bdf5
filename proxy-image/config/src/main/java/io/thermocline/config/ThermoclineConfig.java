package io.thermocline.config;

import java.util.List;

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
        WarmerConfig warmer) {

    public ThermoclineConfig {
        collections = collections == null ? List.of() : List.copyOf(collections);
    }

    /** The tiering policy of a namespace ({@code db.collection}), if it is tiered. */
    public java.util.Optional<CollectionPolicy> policyFor(String namespace) {
        return collections.stream().filter(p -> p.namespace().equals(namespace)).findFirst();
    }
}
