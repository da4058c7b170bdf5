package io.thermocline.embedded.member;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.DecoderException;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.security.MemberSecurity;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.MalformedMessageException;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireMessage;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection to a member. Commands run off the event loop (they may wait for
 * replication, a change, or a topology change), one at a time per connection, in arrival order.
 * Implements the streaming (exhaust) hello that drivers' monitors use.
 */
final class MemberHandler extends SimpleChannelInboundHandler<Inbound> {
    private static final Logger log = LoggerFactory.getLogger(MemberHandler.class);

    private final CommandDispatcher dispatcher;
    private final MemberSecurity security;
    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final Executor executor;
    private final int connectionId;
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);

    MemberHandler(
            CommandDispatcher dispatcher,
            MemberSecurity security,
            ReplicationCoordinator coordinator,
            MemberState self,
            Executor executor,
            int connectionId) {
        this.dispatcher = dispatcher;
        this.security = security;
        this.coordinator = coordinator;
        this.self = self;
        this.executor = executor;
        this.connectionId = connectionId;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, Inbound inbound) {
        Channel channel = ctx.channel();
        tail = tail.thenRunAsync(
                () -> {
                    try {
                        handle(channel, inbound);
                    } catch (CommandDispatcher.CloseConnection e) {
                        channel.close();
                    } catch (RuntimeException e) {
                        log.warn("event=commandFailed member={} error={}", self.index(), e.toString());
                        channel.close();
                    } catch (Error e) {
                        // an Error left to the chain would complete it exceptionally: every later command on this
                        // connection
                        // would go unanswered with the connection open (a client sees a hang, not a network error)
                        log.error("event=commandFailed member={}", self.index(), e);
                        channel.close();
                    }
                },
                executor);
    }

    private void handle(Channel channel, Inbound inbound) {
        if (inbound.message() instanceof OpMsg msg) {
            BsonDocument command = msg.command();
            String db = msg.database() == null ? "admin" : msg.database();
            String name = command.isEmpty() ? "" : command.getFirstKey().toLowerCase();
            if ((name.equals("hello") || name.equals("ismaster"))
                    && command.containsKey("topologyVersion")
                    && command.containsKey("maxAwaitTimeMS")) {
                streamHello(channel, msg, db, command);
                return;
            }
            BsonDocument reply = secured(channel, db, name, command, false);
            if (!msg.moreToCome()) {
                send(channel, OpMsg.reply(msg.requestId(), reply), inbound.compressedWith());
            }
        } else if (inbound.message() instanceof OpQuery query) {
            BsonDocument command = query.query();
            if (command.containsKey("$query") && command.get("$query").isDocument()) {
                BsonDocument unwrapped = command.getDocument("$query").clone();
                BsonValue pref = command.get("$readPreference");
                if (pref != null) {
                    unwrapped.put("$readPreference", pref);
                }
                command = unwrapped;
            }
            BsonDocument reply = query.isCommand()
                    ? secured(
                            channel,
                            query.database(),
                            command.isEmpty() ? "" : command.getFirstKey().toLowerCase(),
                            command,
                            true)
                    : new BsonDocument("$err", new BsonString("OP_QUERY is only supported for commands"))
                            .append("ok", new BsonDouble(0));
            send(channel, OpReply.reply(query.requestId(), reply), inbound.compressedWith());
        } else {
            log.warn(
                    "event=unexpectedMessage member={} type={}",
                    self.index(),
                    inbound.message().getClass().getSimpleName());
            channel.close();
        }
    }

    /** Authentication first (security.MemberSecurity), then the member; hello replies get the SASL fields. */
    private BsonDocument secured(Channel channel, String db, String lowerName, BsonDocument command, boolean legacy) {
        Optional<BsonDocument> answered = security.intercept(channel, db, command);
        if (answered.isPresent()) {
            return answered.get();
        }
        BsonDocument reply = dispatcher.dispatch(channel, connectionId, db, command, legacy);
        return lowerName.equals("hello") || lowerName.equals("ismaster")
                ? security.hello(channel, command, reply)
                : reply;
    }

    /**
     * Awaitable hello: answers when this member's topologyVersion differs from the client's, or
     * after maxAwaitTimeMS; with exhaustAllowed it keeps answering (moreToCome) on the same request.
     */
    private void streamHello(Channel channel, OpMsg msg, String db, BsonDocument command) {
        long maxAwait = command.getNumber("maxAwaitTimeMS").longValue();
        BsonDocument known = command.getDocument("topologyVersion");
        int responseTo = msg.requestId();
        while (channel.isActive()) {
            BsonDocument seen = known;
            coordinator
                    .topology()
                    .await(
                            () -> !channel.isActive()
                                    || !HelloReply.topologyVersion(self).equals(seen),
                            maxAwait,
                            TimeUnit.MILLISECONDS);
            if (!channel.isActive()) {
                return;
            }
            BsonDocument reply = dispatcher.dispatch(channel, connectionId, db, command, false);
            known = reply.getDocument("topologyVersion");
            OpMsg out = OpMsg.reply(responseTo, reply);
            if (!msg.exhaustAllowed()) {
                send(channel, out, null);
                return;
            }
            out = out.withFlagBits(OpMsg.MORE_TO_COME);
            responseTo = out.requestId();
            send(channel, out, null);
        }
    }

    private void send(Channel channel, WireMessage message, Compressor compressor) {
        channel.writeAndFlush(new Outbound(message, compressor));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        self.store().handleClose(ctx.channel());
        coordinator.topology().signalAll();
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof MalformedMessageException bad) {
            log.warn("event=malformedMessage member={} error={}", self.index(), bad.getMessage());
            BsonDocument error = MemberStore.errorReply(2, "BadValue", bad.getMessage());
            ctx.writeAndFlush(new Outbound(OpMsg.reply(0, error), null)).addListener(f -> ctx.close());
            return;
        }
        log.debug("event=connectionError member={} error={}", self.index(), cause.toString());
        ctx.close();
    }
}
