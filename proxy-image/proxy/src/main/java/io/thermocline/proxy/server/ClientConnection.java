package io.thermocline.proxy.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.thermocline.security.authentication.ConnectionAuth;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.MalformedMessageException;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireMessage;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One client connection. Requests are handled one at a time, in order, as a mongod does; a
 * client that pipelines is read no further until the proxy catches up.
 */
final class ClientConnection extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(ClientConnection.class);
    private static final int MAX_QUEUED = 8;

    private final long id;
    private final ProxyServer server;
    private final CommandDispatcher dispatcher;
    private final ArrayDeque<Inbound> queue = new ArrayDeque<>();
    private Channel channel;
    private boolean busy;
    private boolean rejected;
    private volatile List<Compressor> compressors = List.of();
    private volatile boolean loadBalanced;
    private ConnectionAuth auth;

    ClientConnection(long id, ProxyServer server, CommandDispatcher dispatcher) {
        this.id = id;
        this.server = server;
        this.dispatcher = dispatcher;
    }

    long id() {
        return id;
    }

    Channel channel() {
        return channel;
    }

    boolean isOpen() {
        return channel.isActive();
    }

    List<Compressor> compressors() {
        return compressors;
    }

    void negotiated(List<Compressor> agreed, boolean lb) {
        this.compressors = agreed;
        this.loadBalanced = this.loadBalanced || lb;
    }

    boolean loadBalanced() {
        return loadBalanced;
    }

    /** What this connection has authenticated as (issue 15). */
    ConnectionAuth auth() {
        return auth;
    }

    /** Sends a message, compressed the way the request it answers was (as the compression spec asks). */
    CompletableFuture<Void> send(WireMessage message, Compressor compressor) {
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

    void sendAndClose(WireMessage message) {
        channel.writeAndFlush(new Outbound(message, null)).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        auth = server.security().open(channel.remoteAddress());
        rejected = !server.clientOpened(this);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof Inbound inbound)) {
            return;
        }
        queue.add(inbound);
        if (queue.size() > MAX_QUEUED) {
            channel.config().setAutoRead(false);
        }
        if (!busy) {
            processNext();
        }
    }

    private void processNext() {
        Inbound next = queue.poll();
        if (next == null) {
            busy = false;
            if (!channel.config().isAutoRead()) {
                channel.config().setAutoRead(true);
            }
            return;
        }
        busy = true;
        CompletableFuture<Void> handled;
        try {
            handled = rejected ? dispatcher.rejectOverLimit(this, next) : dispatcher.dispatch(this, next);
        } catch (RuntimeException e) {
            handled = CompletableFuture.failedFuture(e);
        }
        handled.whenComplete((v, e) -> {
            if (e != null) {
                if (channel.isActive()) {
                    LOG.warn("event=request_failed connection={} error=\"{}\"", id, e.toString());
                }
                channel.close();
            }
            if (channel.eventLoop().inEventLoop()) {
                processNext();
            } else {
                channel.eventLoop().execute(this::processNext);
            }
        });
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        queue.clear();
        server.clientClosed(this, rejected);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof MalformedMessageException bad) {
            server.metrics().malformedMessage();
            LOG.info("event=malformed_message connection={} remote={} error=\"{}\"", id, ctx.channel().remoteAddress(), bad.getMessage());
            if (bad.requestId() != 0) {
                BsonDocument error = ErrorReplies.error(ErrorReplies.PROTOCOL_ERROR, "ProtocolError",
                        "malformed message, closing the connection: " + bad.getMessage(), List.of());
                sendAndClose(OpMsg.reply(bad.requestId(), error));
            } else {
                ctx.close();
            }
            return;
        }
        LOG.info("event=client_connection_error connection={} error=\"{}\"", id, root.toString());
        ctx.close();
    }
}
