package io.thermocline.proxy.gateway;

import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One tier as the tiered layer reaches it: a command of a client's request (as sent, or rewritten) goes to the member
 * of the tier that must serve it (transaction pin, cursor, primary, read preference), with mongos-only fields and
 * cluster times translated, and comes back with the cursor it opened registered under a proxy cursor id, so getMore
 * and killCursors keep working. One per tier for the life of the proxy, not one per request.
 */
public interface TierGateway {

    Tier tier();

    /** The tier's members as the proxy's monitor sees them now. */
    TierTopology topology();

    /** How long the tier has been out of service for requests that need it (unreachable, or stalling); empty while it serves. */
    Optional<Duration> outOfServiceFor();

    /** {@code msg} of {@code request} on this tier; fails with the error the round trip met (mapped for the client by the caller). */
    CompletableFuture<TierReply> send(Request request, OpMsg msg);

    /**
     * Ends the cursor {@code proxyCursorId} that a reply of {@link #send} opened and the caller does not hand to the
     * client: out of the proxy's table and killed on its member. Completes with whether the member reported it killed
     * (false when the table no longer held it: its connection or session ended it first).
     */
    CompletableFuture<Boolean> kill(long proxyCursorId);
}
