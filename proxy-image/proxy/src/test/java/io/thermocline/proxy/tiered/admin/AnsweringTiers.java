package io.thermocline.proxy.tiered.admin;

import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.TierGateway;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.gateway.TierReply;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.bson.RawBsonDocument;

/** Two tiers that answer each command at once with the reply {@code reply} gives for the tier: the admin commands' tests. */
final class AnsweringTiers {

    private AnsweringTiers() {}

    static TierGateways answering(BiFunction<Tier, OpMsg, RawBsonDocument> reply) {
        return new TierGateways(gateway(Tier.FAST, reply), gateway(Tier.ARCHIVE, reply));
    }

    /** A client's request of {@code msg} (no connection: the gateways above never look at it). */
    static Request requestOf(OpMsg msg) {
        return Request.of(null, msg, null);
    }

    private static TierGateway gateway(Tier tier, BiFunction<Tier, OpMsg, RawBsonDocument> reply) {
        return new TierGateway() {
            @Override
            public Tier tier() {
                return tier;
            }

            @Override
            public TierTopology topology() {
                throw new UnsupportedOperationException("the admin commands never ask for a tier's members");
            }

            @Override
            public Optional<Duration> outOfServiceFor() {
                return Optional.empty(); // always serving
            }

            @Override
            public CompletableFuture<TierReply> send(Request request, OpMsg msg) {
                RawBsonDocument body = reply.apply(tier, msg);
                return CompletableFuture.completedFuture(new TierReply(body, OpMsg.isOk(body)));
            }

            @Override
            public CompletableFuture<Boolean> kill(long proxyCursorId) {
                return CompletableFuture.completedFuture(false); // these tiers open no cursor
            }
        };
    }
}
