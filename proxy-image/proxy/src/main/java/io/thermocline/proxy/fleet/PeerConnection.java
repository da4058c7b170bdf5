package io.thermocline.proxy.fleet;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.thermocline.proxy.command.Client;
import io.thermocline.proxy.command.CommandEnvelope;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.server.cursors.CursorPeers;
import io.thermocline.security.UserName;
import io.thermocline.security.authentication.ConnectionAuth;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireMessage;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A peer's connection to this replica: it must pass the handshake before anything else; then it may
 * ping and send cursor commands for cursors this replica owns. Anything else closes it.
 */
final class PeerConnection extends ChannelInboundHandlerAdapter implements Client {
    private static final Logger LOG = LoggerFactory.getLogger(PeerConnection.class);
    /** Peer connections get ids of their own range, so they never collide with a client connection's. */
    private static final AtomicLong IDS = new AtomicLong(Long.MIN_VALUE / 2);

    private final long id = IDS.incrementAndGet();
    private final ClusterSecret secret;
    private final String instanceId;
    private final PeerRequests requests;
    private final Function<BsonDocument, BsonDocument> ping;
    private Channel channel;
    private byte[] clientNonce;
    private byte[] serverNonce;
    private boolean authenticated;
    private ConnectionAuth auth;

    PeerConnection(ClusterSecret secret, String instanceId, PeerRequests requests, Function<BsonDocument, BsonDocument> ping) {
        this.secret = secret;
        this.instanceId = instanceId;
        this.requests = requests;
        this.ping = ping;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        auth = new ConnectionAuth(channel.remoteAddress());
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof Inbound inbound) || !(inbound.message() instanceof OpMsg request)) {
            ctx.close();
            return;
        }
        RawBsonDocument body = request.body();
        String name = body.isEmpty() ? "" : body.getFirstKey();
        if (!authenticated) {
            handshake(request, name);
            return;
        }
        switch (name) {
            case PeerProtocol.PING -> send(OpMsg.reply(request.requestId(), ping.apply(body)), null);
            case "getMore", "killCursors" -> {
                BsonValue hops = body.get(CursorPeers.HOPS_FIELD);
                Client caller = new OnBehalfOf(this, callerAuth(body.get(CursorPeers.CALLER_FIELD)));
                RawBsonDocument stripped = CommandEnvelope.edit(body, Map.of(),
                        Set.of(CursorPeers.HOPS_FIELD, CursorPeers.CALLER_FIELD), new BsonDocument());
                OpMsg forwarded = new OpMsg(request.requestId(), 0, 0, stripped, request.sequences());
                requests.handle(Request.of(caller, forwarded, null), hops != null && hops.isNumber() ? hops.asNumber().intValue() : 1)
                        .whenComplete((v, e) -> {
                            if (e != null) {
                                LOG.warn("event=peer_request_failed command={} error=\"{}\"", name, e.toString());
                                ctx.close();
                            }
                        });
            }
            default -> refuse(request, MongoError.COMMAND_NOT_SUPPORTED, "the peer link carries cursor commands only, not " + name);
        }
    }

    /**
     * Who the forwarding replica's client is: the owner checks its cursors' creators against that user. A
     * command without the field (a peer that does not send it) runs as nobody under enforcement: fail closed.
     */
    private ConnectionAuth callerAuth(BsonValue caller) {
        if (caller == null || !caller.isDocument()) {
            return ConnectionAuth.vouchedFor(channel.remoteAddress(), true, null);
        }
        BsonDocument who = caller.asDocument();
        boolean enforced = !who.containsKey("enforced") || who.getBoolean("enforced").getValue();
        UserName user = who.isString("user") && who.isString("db")
                ? new UserName(who.getString("user").getValue(), who.getString("db").getValue()) : null;
        return ConnectionAuth.vouchedFor(channel.remoteAddress(), enforced, user);
    }

    /** The peer connection, seen by a forwarded command as its client's connection on the forwarding replica. */
    private record OnBehalfOf(PeerConnection link, ConnectionAuth auth) implements Client {
        @Override
        public long id() {
            return link.id();
        }

        @Override
        public boolean isOpen() {
            return link.isOpen();
        }

        @Override
        public boolean loadBalanced() {
            return false;
        }

        @Override
        public EventLoop eventLoop() {
            return link.eventLoop();
        }

        @Override
        public void loadBalancedAsked() {
        }

        @Override
        public CompletableFuture<Void> send(WireMessage message, Compressor compressor) {
            return link.send(message, compressor);
        }
    }

    private void handshake(OpMsg request, String name) {
        BsonDocument body = request.body();
        if (name.equals(PeerProtocol.HELLO) && clientNonce == null && PeerProtocol.bytes(body, "nonce") != null) {
            clientNonce = PeerProtocol.bytes(body, "nonce");
            serverNonce = PeerProtocol.nonce();
            send(OpMsg.reply(request.requestId(), new BsonDocument("ok", new BsonDouble(1))
                    .append("instanceId", new BsonString(instanceId))
                    .append("nonce", PeerProtocol.binary(serverNonce))
                    .append("proof", PeerProtocol.binary(secret.proof(PeerProtocol.SERVER, clientNonce, serverNonce)))), null);
            return;
        }
        if (name.equals(PeerProtocol.AUTH) && clientNonce != null
                && secret.verify(PeerProtocol.bytes(body, "proof"), PeerProtocol.CLIENT, clientNonce, serverNonce)) {
            authenticated = true;
            send(OpMsg.reply(request.requestId(), new BsonDocument("ok", new BsonDouble(1))), null);
            return;
        }
        LOG.warn("event=peer_refused remote={} command={} reason=\"no valid proof of the cluster secret\"", channel.remoteAddress(), name);
        refuse(request, MongoError.AUTHENTICATION_FAILED, "this is a Thermocline peer port: only replicas of the same"
                + " cluster (holding its fleet.secretFile) may use it; clients connect to the proxy's client port");
    }

    private void refuse(OpMsg request, MongoError error, String message) {
        channel.writeAndFlush(new Outbound(OpMsg.reply(request.requestId(), error.reply(message)), null))
                .addListener(f -> channel.close());
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public boolean isOpen() {
        return channel.isActive();
    }

    /** A forwarded command runs for the peer's client, whose own connection settled this. */
    @Override
    public boolean loadBalanced() {
        return false;
    }

    @Override
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    @Override
    public ConnectionAuth auth() {
        return auth;
    }

    @Override
    public void loadBalancedAsked() {
    }

    @Override
    public CompletableFuture<Void> send(WireMessage message, Compressor compressor) {
        return Client.writeTo(channel, message, compressor);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.info("event=peer_connection_error remote={} error=\"{}\"", ctx.channel().remoteAddress(), cause.toString());
        ctx.close();
    }
}
