package io.thermocline.proxy.tiered.exchange;

import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.wire.OpMsg;
import java.util.Optional;
import org.bson.BsonDocument;

/**
 * One claimed command in flight: the client's request, the command as a server sees it (sequences
 * folded in), and the routing table it is decided with (one table per command, so every decision of
 * a command sees the same coverage). The way to the tiers is not in it: the handlers reach them
 * through {@link CausalTiers}, over the proxy's gateway to each tier ({@link TierGateways}).
 */
public record Exchange(
        Request request,
        BsonDocument command,
        CommandTraits traits,
        Optional<SessionKey> session,
        TieringFollower.Decided decided) {

    public RoutingTable table() {
        return decided.table();
    }

    public OpMsg msg() {
        return request.msg();
    }

    public String database() {
        return msg().database();
    }
}
