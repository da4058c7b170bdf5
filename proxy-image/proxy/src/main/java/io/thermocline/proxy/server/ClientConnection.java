package io.thermocline.proxy.server;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.DecoderException;
import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.command.Client;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.server.handshake.Hello;
import io.thermocline.proxy.server.memory.ConnectionMemory;
import io.thermocline.proxy.server.memory.MessageMemory;
import io.thermocline.proxy.tls.ClientTls;
import io.thermocline.security.authentication.ConnectionAuth;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.MalformedMessageException;
import io.thermocline.wire.OpCode;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.RefusedMessage;
import io.thermocline.wire.WireFrameDecoder;
import io.thermocline.wire.WireMessage;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection. Each message is decoded here, once, into a {@link Request} for the
 * handlers. Requests are handled one at a time, in order, as a mongod does; a client that
 * pipelines is read no further until the proxy catches up.
 */
final class ClientConnection extends ChannelInboundHandlerAdapter implements Client {
    private static final Logger LOG = LoggerFactory.getLogger(ClientConnection.class);
    private static final int MAX_QUEUED = 8;
    /**
     * The largest message, framed or inflated, a connection that has not logged in may send where authentication is
     * required: what it may run then (the handshake, SASL, ping, buildInfo, endSessions of up to 10,000 sessions) fits
     * in far less, and a small bound keeps a flood of unauthenticated connections from making the proxy buffer or
     * inflate 48 MB each (a 47 KB zlib message inflated to 48 MB).
     */
    static final int UNAUTHENTICATED_MESSAGE_LIMIT = 1024 * 1024;
    /**
     * Where authentication is required, a connection that has not logged in must complete each message (its first
     * included, TLS handshake before it) within this time, or is closed: otherwise connections that send a few bytes
     * and stop would be held for ever, bounded only by maxClientConnections. An idle connection with nothing
     * half-sent stays (drivers' monitoring connections send hello and never log in). The default of {@link
     * ProxySettings#handshakeDeadline}.
     */
    static final Duration DEFAULT_HANDSHAKE_DEADLINE = Duration.ofSeconds(10);

    private final long id;
    private final ProxyServer server;
    private final RequestHandler requests;
    private final Hello hello;
    /** Decoded messages ({@link Inbound}) and refused ones ({@link RefusedMessage}), answered in the order they came. */
    private final ArrayDeque<Object> queue = new ArrayDeque<>();

    private Channel channel;
    private boolean busy;
    private boolean rejected;
    private volatile boolean loadBalanced;
    private ConnectionAuth auth;
    private WireFrameDecoder frames;
    private ConnectionMemory memory;
    /** When the last message completed, when the connection opened, and since when the deadline check has seen a message pending. */
    private volatile long lastMessageNanos;

    private long openedNanos;
    private long pendingSince;
    private volatile boolean anyMessage;
    /** Since when the proxy reads this connection again (bytes that did not come while it did not read are no stall). */
    private long readingSince;

    ClientConnection(long id, ProxyServer server, RequestHandler requests, Hello hello) {
        this.id = id;
        this.server = server;
        this.requests = requests;
        this.hello = hello;
    }

    @Override
    public long id() {
        return id;
    }

    Channel channel() {
        return channel;
    }

    @Override
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    @Override
    public boolean isOpen() {
        return channel.isActive();
    }

    @Override
    public void loadBalancedAsked() {
        this.loadBalanced = true;
    }

    @Override
    public boolean loadBalanced() {
        return loadBalanced;
    }

    void framedBy(WireFrameDecoder decoder) {
        this.frames = decoder;
    }

    /** This connection's share of the process's budget for what messages hold; past the floor, only once logged in. */
    ConnectionMemory memory(MessageMemory process) {
        memory = process.open(() -> !loginPending());
        return memory;
    }

    /** Closes a connection that has not logged in and has left a message (or its first) incomplete past the deadline. */
    private void checkHandshakeDeadline() {
        if (!channel.isActive()
                || server.security().mode() != ProxySecurity.Mode.REQUIRED
                || (auth != null && auth.isAuthenticated())) {
            return;
        }
        long now = System.nanoTime();
        boolean pending = !anyMessage || (frames != null && frames.holdsPartialMessage());
        if (!pending) {
            pendingSince = 0;
        } else if (anyMessage && (pendingSince == 0 || lastMessageNanos > pendingSince)) {
            pendingSince = now; // a message began after the last check: it has the whole deadline from here
        } else if (!anyMessage) {
            pendingSince = openedNanos;
        }
        if (pending
                && now - pendingSince > server.settings().handshakeDeadline().toNanos()) {
            LOG.info(
                    "event=handshake_deadline connection={} remote={} deadline={}",
                    id,
                    channel.remoteAddress(),
                    server.settings().handshakeDeadline());
            channel.close();
            return;
        }
        channel.eventLoop()
                .schedule(
                        this::checkHandshakeDeadline,
                        server.settings().handshakeDeadline().toMillis() / 4,
                        TimeUnit.MILLISECONDS);
    }

    /** The message size limit now: the server's, or {@link #UNAUTHENTICATED_MESSAGE_LIMIT} before a required login. */
    int messageSizeLimit() {
        return loginPending()
                ? Math.min(UNAUTHENTICATED_MESSAGE_LIMIT, server.settings().maxMessageSizeBytes())
                : server.settings().maxMessageSizeBytes();
    }

    /** Authentication is required and this connection has not logged in. */
    private boolean loginPending() {
        ConnectionAuth a = auth;
        return server.security().mode() == ProxySecurity.Mode.REQUIRED && (a == null || !a.isAuthenticated());
    }

    /** What this connection has authenticated as (issue 15). */
    @Override
    public ConnectionAuth auth() {
        return auth;
    }

    /** Sends a message, compressed the way the request it answers was (as the compression spec asks). */
    @Override
    public CompletableFuture<Void> send(WireMessage message, Compressor compressor) {
        return Client.writeTo(channel, message, compressor);
    }

    void sendAndClose(WireMessage message) {
        channel.writeAndFlush(new Outbound(message, null)).addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        auth = server.security().open(channel.remoteAddress(), () -> ClientTls.verifiedSubject(channel));
        rejected = !server.clientOpened(this);
        openedNanos = System.nanoTime();
        readingSince = openedNanos;
        if (frames != null) {
            long every = Math.max(
                    50, server.settings().messageMemory().stallTimeout().toMillis() / 4);
            channel.eventLoop().schedule(this::checkStalledMessage, every, TimeUnit.MILLISECONDS);
        }
        if (server.security().mode() == ProxySecurity.Mode.REQUIRED) {
            channel.eventLoop()
                    .schedule(
                            this::checkHandshakeDeadline,
                            server.settings().handshakeDeadline().toMillis() / 4,
                            TimeUnit.MILLISECONDS);
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof Inbound) && !(msg instanceof RefusedMessage)) {
            return;
        }
        anyMessage = true;
        lastMessageNanos = System.nanoTime();
        queue.add(msg);
        updateReading();
        if (!busy) {
            processNext();
        }
    }

    /** Reads on while few messages wait and the budget has not deferred the next frame (backpressure, as mongod's one request at a time). */
    private void updateReading() {
        boolean read = queue.size() <= MAX_QUEUED && (frames == null || !frames.deferred());
        if (channel.config().isAutoRead() != read) {
            channel.config().setAutoRead(read);
            if (read) {
                readingSince = System.nanoTime();
            }
        }
    }

    /**
     * Closes a connection that began a message and sent none of the rest for the stall timeout while the proxy read it: a
     * frame left half sent would otherwise hold its budget for ever (and a peer's reset is not always seen on io_uring).
     */
    private void checkStalledMessage() {
        if (!channel.isActive()) {
            return;
        }
        Duration stall = server.settings().messageMemory().stallTimeout();
        long quietSince = Math.max(frames.lastBytesNanos(), readingSince);
        if (frames.holdsPartialMessage()
                && channel.config().isAutoRead()
                && System.nanoTime() - quietSince > stall.toNanos()) {
            LOG.info(
                    "event=message_stalled connection={} remote={} held_bytes={} stall_timeout={}",
                    id,
                    channel.remoteAddress(),
                    memory == null ? 0 : memory.held(),
                    stall);
            channel.close();
            return;
        }
        channel.eventLoop()
                .schedule(this::checkStalledMessage, Math.max(50, stall.toMillis() / 4), TimeUnit.MILLISECONDS);
    }

    private void processNext() {
        Object next = queue.poll();
        if (next == null) {
            busy = false;
            updateReading();
            return;
        }
        busy = true;
        CompletableFuture<Void> handled;
        try {
            if (next instanceof RefusedMessage refused) {
                handled = refuse(refused);
            } else {
                handled = rejected ? rejectOverLimit((Inbound) next) : handle((Inbound) next);
            }
        } catch (RuntimeException e) {
            handled = CompletableFuture.failedFuture(e);
        }
        long held = next instanceof Inbound inbound ? inbound.heldBytes() : 0;
        handled.whenComplete((v, e) -> {
            if (e != null) {
                if (channel.isActive()) {
                    LOG.warn("event=request_failed connection={} error=\"{}\"", id, e.toString());
                }
                channel.close();
            }
            if (channel.eventLoop().inEventLoop()) {
                answered(held);
            } else {
                channel.eventLoop().execute(() -> answered(held));
            }
        });
    }

    /** A message is answered: what it held goes back to the budget, a frame the budget deferred may come in now. */
    private void answered(long held) {
        if (memory != null) {
            memory.release(held);
        }
        if (frames != null && frames.deferred()) {
            readingSince = System.nanoTime();
            frames.resume();
        }
        processNext();
    }

    /**
     * A message the budget refused, skipped unread: an error in its turn, the connection kept (mongod runs out of memory
     * rather than close). A fire-and-forget message (moreToCome) gets no reply, as mongod answers none of its failures.
     */
    private CompletableFuture<Void> refuse(RefusedMessage refused) {
        LOG.info(
                "event=message_refused connection={} remote={} bytes={} more_to_come={} reason=\"{}\"",
                id,
                channel.remoteAddress(),
                refused.bytes(),
                refused.moreToCome(),
                refused.reason());
        if (refused.moreToCome()) {
            return CompletableFuture.completedFuture(null);
        }
        BsonDocument error = MongoError.EXCEEDED_MEMORY_LIMIT.reply("Thermocline proxy: a message of " + refused.bytes()
                + " bytes, framed and inflated, refused unread: " + refused.reason());
        WireMessage reply = refused.opCode() == OpCode.OP_QUERY
                ? OpReply.reply(refused.requestId(), error)
                : OpMsg.reply(refused.requestId(), error);
        return send(reply, null);
    }

    /** Decodes the message into the request the handlers take (OP_QUERY carries the legacy handshake only). */
    private CompletableFuture<Void> handle(Inbound inbound) {
        WireMessage message = inbound.message();
        if (message instanceof OpMsg msg) {
            return requests.handle(Request.of(this, msg, inbound.compressedWith()));
        }
        if (message instanceof OpQuery query) {
            return hello.legacy(this, query, inbound.compressedWith());
        }
        sendAndClose(OpMsg.reply(
                message.requestId(),
                MongoError.PROTOCOL_ERROR.reply("clients send OP_MSG or OP_QUERY, not "
                        + message.getClass().getSimpleName())));
        return CompletableFuture.completedFuture(null);
    }

    /** A connection past {@code maxClientConnections} gets one clear error, then is closed. */
    private CompletableFuture<Void> rejectOverLimit(Inbound inbound) {
        BsonDocument error = MongoError.OPERATION_FAILED.reply("Thermocline proxy connection limit reached: "
                + server.settings().maxClientConnections()
                + " client connections are open (proxy.maxClientConnections);"
                + " close idle clients, lower the driver's maxPoolSize, or raise the limit");
        if (inbound.message() instanceof OpQuery q) {
            sendAndClose(OpReply.reply(q.requestId(), error));
        } else {
            sendAndClose(OpMsg.reply(inbound.message().requestId(), error));
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        queue.clear();
        if (memory != null) {
            memory.close(); // whatever is still held (queued, in flight, a frame half received) goes back
        }
        server.clientClosed(this, rejected);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof MalformedMessageException bad) {
            server.metrics().malformedMessage();
            LOG.info(
                    "event=malformed_message connection={} remote={} error=\"{}\"",
                    id,
                    ctx.channel().remoteAddress(),
                    bad.getMessage());
            if (bad.requestId() != 0) {
                sendAndClose(OpMsg.reply(
                        bad.requestId(),
                        MongoError.PROTOCOL_ERROR.reply(
                                "malformed message, closing the connection: " + bad.getMessage())));
            } else {
                ctx.close();
            }
            return;
        }
        LOG.info("event=client_connection_error connection={} error=\"{}\"", id, root.toString());
        ctx.close();
    }
}
