package io.thermocline.proxy.backend;

import com.mongodb.ServerAddress;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.Outbound;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One connection from the proxy to a backend member, carrying at most one request at a time:
 * the pool lends it for exactly one request/reply round trip.
 */
public final class BackendConnection {
    private static final AtomicInteger REQUEST_IDS = new AtomicInteger(1);

    private final Channel channel;
    private final ServerAddress address;
    private final long generation;
    private volatile Pending pending;
    /** Agreed in the connection's handshake; null sends uncompressed. */
    private volatile Compressor compressor;

    private record Pending(int requestId, CompletableFuture<OpMsg> reply) {
    }

    BackendConnection(Channel channel, ServerAddress address, long generation) {
        this.channel = channel;
        this.address = address;
        this.generation = generation;
        channel.pipeline().addLast("reply", new ReplyHandler());
    }

    public static int nextRequestId() {
        return REQUEST_IDS.updateAndGet(i -> i == Integer.MAX_VALUE ? 1 : i + 1);
    }

    public ServerAddress address() {
        return address;
    }

    public long generation() {
        return generation;
    }

    public Compressor compressor() {
        return compressor;
    }

    public void compressWith(Compressor agreed) {
        this.compressor = agreed;
    }

    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    public boolean isOpen() {
        return channel.isActive();
    }

    public void close() {
        channel.close();
    }

    /** Sends a request and completes with its reply; {@code timeout} null means wait as long as it takes. */
    public CompletableFuture<OpMsg> roundTrip(OpMsg request, Duration timeout) {
        CompletableFuture<OpMsg> reply = new CompletableFuture<>();
        if (pending != null) {
            reply.completeExceptionally(new IllegalStateException("backend connection already busy"));
            return reply;
        }
        pending = new Pending(request.requestId(), reply);
        if (timeout != null) {
            var task = channel.eventLoop().schedule(() -> {
                if (reply.completeExceptionally(new BackendUnavailableException(
                        address + " did not answer within " + timeout.toMillis() + " ms", true))) {
                    channel.close();
                }
            }, timeout.toMillis(), TimeUnit.MILLISECONDS);
            reply.whenComplete((r, e) -> task.cancel(false));
        }
        channel.writeAndFlush(new Outbound(request, compressor)).addListener(f -> {
            if (!f.isSuccess()) {
                fail(new BackendUnavailableException("write to " + address + " failed: " + failure(f.cause()), false));
                channel.close();
            }
        });
        return reply;
    }

    private void fail(Throwable cause) {
        Pending p = pending;
        if (p != null) {
            pending = null;
            p.reply.completeExceptionally(cause);
        }
    }

    private final class ReplyHandler extends SimpleChannelInboundHandler<Inbound> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Inbound inbound) {
            Pending p = pending;
            if (p == null || !(inbound.message() instanceof OpMsg reply) || reply.responseTo() != p.requestId) {
                fail(new BackendUnavailableException(address + " sent an unexpected message", true));
                ctx.close();
                return;
            }
            pending = null;
            p.reply.complete(reply);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            fail(new BackendUnavailableException("connection to " + address + " closed", true));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(new BackendUnavailableException("connection to " + address + " failed: " + failure(cause), true));
            ctx.close();
        }
    }

    /**
     * What went wrong, as a person can act on it: a TLS failure names its root cause (an untrusted certificate, a host
     * name the certificate does not cover, a member that does not speak TLS), which the SSL engine's own message hides.
     */
    static String failure(Throwable cause) {
        Throwable root = cause;
        boolean tls = false;
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            tls |= t instanceof javax.net.ssl.SSLException;
            root = t;
        }
        if (!tls) {
            return String.valueOf(cause.getMessage());
        }
        if (root instanceof io.netty.handler.ssl.NotSslRecordException) {
            return "TLS handshake failed: the member does not speak TLS (not an SSL/TLS record); is tls=true meant for this tier?";
        }
        String reason = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        return "TLS handshake failed: " + (root instanceof java.security.cert.CertificateException
                || root instanceof java.security.GeneralSecurityException ? "certificate rejected: " : "") + reason;
    }
}
