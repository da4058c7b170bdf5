package io.thermocline.proxy.gateway;

import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.OpMsg;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.bson.RawBsonDocument;

/** The tiered layer's two tiers: the fast tier and the archive, each behind its own gateway. */
public record TierGateways(TierGateway fast, TierGateway archive) {

    public TierGateways {
        Objects.requireNonNull(fast, "fast");
        Objects.requireNonNull(archive, "archive");
    }

    public TierGateway of(Tier tier) {
        return tier == Tier.FAST ? fast : archive;
    }

    /** {@code msg} of {@code request} on {@code tier}: the reply's body, as the tiered handlers read it. */
    public CompletableFuture<RawBsonDocument> send(Tier tier, Request request, OpMsg msg) {
        return of(tier).send(request, msg).thenApply(TierReply::body);
    }
}
