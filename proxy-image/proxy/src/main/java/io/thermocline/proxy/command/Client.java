package io.thermocline.proxy.command;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.thermocline.security.authentication.ConnectionAuth;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireMessage;

import java.util.concurrent.CompletableFuture;

/** The client connection a request came on, as the handlers see it. */
public interface Client {

    long id();

    boolean isOpen();

    /** Whether the driver asked for load-balanced mode in its handshake (cursors are then owned by the connection). */
    boolean loadBalanced();

    /** The connection's event loop: backend connections on it answer without a thread hand-off. */
    EventLoop eventLoop();

    /** What this connection has authenticated as (issue 15). */
    ConnectionAuth auth();

    /** The driver's handshake asked for load-balanced mode (it then stays on for the connection). */
    void loadBalancedAsked();

    /** Sends a message, compressed with {@code compressor} (the one the request it answers came with) unless null. */
    CompletableFuture<Void> send(WireMessage message, Compressor compressor);

    /** {@link #send} on a Netty channel: completes when the message is written. */
    static CompletableFuture<Void> writeTo(Channel channel, WireMessage message, Compressor compressor) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        channel.writeAndFlush(new Outbound(message, compressor)).addListener(f -> {
            if (f.isSuccess()) {
                done.complete(null);
            } else {
                done.completeExceptionally(f.cause());
            }
        });
        return done;
    }
}
