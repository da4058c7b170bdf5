package io.thermocline.proxy.server.cursors;

import io.thermocline.security.authentication.ConnectionAuth;
import org.bson.RawBsonDocument;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * The other replicas of the fleet, as the cursor commands see them: who owns a cursor id this replica
 * does not hold (the id names its owner), and a way to send that owner the command.
 */
public interface CursorPeers {

    /** A command reaches at most this many replicas after the client's: the owner answers, never forwards again. */
    int MAX_HOPS = 1;

    /** The field carrying the hop count on the peer link; never reaches a member. */
    String HOPS_FIELD = "$thermoclineHops";
    /** The forwarding replica's client, {@code {enforced: bool, user?, db?}}: the owner checks the cursor's creator against it. */
    String CALLER_FIELD = "$thermoclineCaller";

    sealed interface Owner {
    }

    record Peer(String instanceId, InetSocketAddress address) implements Owner {
    }

    /** No live replica owns the id: {@code why} tells the client, in CursorNotFound's message. */
    record Gone(String why) implements Owner {
    }

    Owner ownerOf(long cursorId);

    /** Sends {@code command} (a getMore or killCursors in the owner's own ids) to the owner, {@code hops} counted, on behalf of {@code caller}. */
    CompletableFuture<RawBsonDocument> call(Peer owner, RawBsonDocument command, int hops, ConnectionAuth caller);

    /** A proxy without peers. */
    CursorPeers NONE = new CursorPeers() {
        @Override
        public Owner ownerOf(long cursorId) {
            return new Gone("it was not opened through this proxy instance, and this proxy has no fleet peers"
                    + " (fleet.peerService or fleet.peers) to forward it to");
        }

        @Override
        public CompletableFuture<RawBsonDocument> call(Peer owner, RawBsonDocument command, int hops, ConnectionAuth caller) {
            return CompletableFuture.failedFuture(new IllegalStateException("no fleet peers"));
        }
    };
}
