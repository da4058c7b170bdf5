package io.thermocline.proxy.tiered;

import io.thermocline.proxy.topology.Tier;
import java.util.Objects;

/** The tiered layer's two tiers: the fast tier and the archive, each behind its own gateway. */
public record TierGateways(TierGateway fast, TierGateway archive) {

    public TierGateways {
        Objects.requireNonNull(fast, "fast");
        Objects.requireNonNull(archive, "archive");
    }

    public TierGateway of(Tier tier) {
        return tier == Tier.FAST ? fast : archive;
    }
}
