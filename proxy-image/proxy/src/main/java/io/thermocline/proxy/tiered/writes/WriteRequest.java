package io.thermocline.proxy.tiered.writes;

import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.session.SessionKey;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.RawBsonDocument;

/**
 * One client write on a tiered namespace, as the write path sees it: the command as a server sees it
 * (sequences folded in), its traits and session, the routing table it is decided with, and the way to
 * the fast tier on the client's own connection.
 */
public record WriteRequest(BsonDocument command, CommandTraits traits, Optional<SessionKey> session, RoutingTable table,
                           FastTier fastTier) {

    /** The client's connection to the fast tier, kept by the proxy's forwarding. */
    public interface FastTier {
        /** The command as the client sent it (its lsid and txnNumber kept), answered by the fast tier. */
        RawBsonDocument forwardAsSent();

        /**
         * A command of the proxy's own on the client's connection and session, to the member the session is
         * pinned to (inside the client's transaction when the body carries its lsid, txnNumber and autocommit).
         */
        RawBsonDocument send(BsonDocument body);

        /** The client has observed this fast-tier time (the commit of a transaction the proxy ran for it). */
        void observed(BsonTimestamp operationTime);
    }
}
