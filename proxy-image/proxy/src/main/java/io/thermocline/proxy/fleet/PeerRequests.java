package io.thermocline.proxy.fleet;

import io.thermocline.proxy.command.Request;

import java.util.concurrent.CompletableFuture;

/** What the owner runs for a peer: the cursor commands, answered on the peer connection the request came on. */
@FunctionalInterface
public interface PeerRequests {
    CompletableFuture<Void> handle(Request request, int hops);
}
