package io.thermocline.proxy.tiered.explain;

import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.RoutingExplanation;
import io.thermocline.proxy.tiered.exchange.CausalTiers;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonString;
import org.bson.RawBsonDocument;

/** {@code explain} of a command on tiered data: the tier's own plan, with which tier the proxy would use and why. */
public final class TieredExplain {

    private final CausalTiers tiers;
    private final RoutingMetrics metrics;

    public TieredExplain(CausalTiers tiers, RoutingMetrics metrics) {
        this.tiers = tiers;
        this.metrics = metrics;
    }

    public RawBsonDocument explain(Exchange x, CommandClass cls) throws InterruptedException {
        RoutingExplanation explanation = RoutingExplanation.of(cls, x.table());
        boolean onFast = switch (explanation.served()) {
            case FAST_TIER, FAST_TIER_THEN_ARCHIVE, PROMOTE_THEN_FAST_TIER, RESOLVE_THEN_FAST_TIER -> true;
            default -> false;
        };
        metrics.decided("explain", onFast ? Served.FAST : Served.ARCHIVE, explanation.reason());
        OpMsg msg = Replies.forTier(x.msg());
        RawBsonDocument reply = onFast ? tiers.fast(x, msg) : tiers.archive(x, msg);
        BsonDocument out = new BsonDocument();
        if (Replies.isOk(reply)) {
            reply.forEach(out::append);
        } else {
            // a tier without explain (an embedded server) still gets the routing answer, which is the proxy's own
            out.append("ok", new BsonDouble(1)).append("tierExplainError", reply.get("errmsg", new BsonString("")));
        }
        out.append("thermocline", explanation.toBsonDocument());
        return OpMsg.raw(out);
    }
}
