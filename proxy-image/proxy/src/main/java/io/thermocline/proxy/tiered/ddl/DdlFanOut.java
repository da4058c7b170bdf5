package io.thermocline.proxy.tiered.ddl;

import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.Reason;
import io.thermocline.proxy.tiered.exchange.CausalTiers;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.proxy.tiered.writes.TieredWrites;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DDL on a tiered namespace (createIndexes, dropIndexes, collMod, drop, rename, create) applies to the
 * archive first (the cluster the application believes in), then to the fast tier.
 */
public final class DdlFanOut {

    private static final Logger LOG = LoggerFactory.getLogger(DdlFanOut.class);

    /**
     * Runs a drop of these namespaces with copy-ups fenced out, once the feeder mirrored every fast-tier
     * write acknowledged before it ({@link TieredWrites#dropping}).
     */
    @FunctionalInterface
    public interface DropGuard {
        RawBsonDocument dropping(List<String> namespaces, TieredWrites.Drop drop) throws InterruptedException;
    }

    private final CausalTiers tiers;
    private final DropGuard drops;
    private final RoutingMetrics metrics;

    public DdlFanOut(CausalTiers tiers, DropGuard drops, RoutingMetrics metrics) {
        this.tiers = tiers;
        this.drops = drops;
        this.metrics = metrics;
    }

    /**
     * A drop first fences copy-ups out and waits until the feeder mirrored every fast-tier write
     * acknowledged before it: the dropped documents would otherwise come back.
     */
    public RawBsonDocument apply(Exchange x, CommandClass.Ddl ddl) throws InterruptedException {
        metrics.decided("ddl", Served.BOTH, Reason.DDL_ON_TIERED_NAMESPACE);
        if (ddl.commandName().equalsIgnoreCase("drop") || ddl.commandName().equalsIgnoreCase("dropDatabase")) {
            return drops.dropping(ddl.namespaces(), () -> bothTiers(x, ddl));
        }
        return bothTiers(x, ddl);
    }

    private RawBsonDocument bothTiers(Exchange x, CommandClass.Ddl ddl) {
        RawBsonDocument archived = tiers.onArchive(x, x.msg());
        if (!Replies.isOk(archived)) {
            return archived;
        }
        RawBsonDocument fastReply = tiers.fast(x, x.msg());
        if (!Replies.isOk(fastReply) && !ignorableOnFastTier(fastReply)) {
            LOG.warn(
                    "event=ddl_fast_tier_failed command={} namespaces={} code={}",
                    ddl.commandName(),
                    ddl.namespaces(),
                    fastReply.get("code"));
            return fastReply;
        }
        // the fast tier's time: the client's causal point stays in one clock
        BsonTimestamp fastTime = Replies.operationTime(fastReply);
        return fastTime == null ? archived : Replies.withOperationTime(archived, fastTime);
    }

    /** The fast tier may lack a collection or index the archive has (nothing warmed yet), or have it already. */
    private static boolean ignorableOnFastTier(BsonDocument reply) {
        BsonValue code = reply.get("code");
        int c = code != null && code.isNumber() ? code.asNumber().intValue() : -1;
        return MongoError.NAMESPACE_NOT_FOUND.is(c)
                || MongoError.INDEX_NOT_FOUND.is(c)
                || MongoError.NAMESPACE_EXISTS.is(c);
    }
}
