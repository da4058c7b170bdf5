package io.thermocline.proxy.server;

import io.thermocline.proxy.auth.AuthorizedCollections;
import io.thermocline.proxy.auth.AuthorizedDatabases;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.gateway.ErrorMapping;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.mode.ModeGate;
import io.thermocline.proxy.server.cursors.CursorPeers;
import io.thermocline.proxy.server.cursors.GetMore;
import io.thermocline.proxy.server.cursors.KillCursors;
import io.thermocline.proxy.server.cursors.OrphanCursors;
import io.thermocline.proxy.server.forwarding.PassThrough;
import io.thermocline.proxy.server.handshake.Authentication;
import io.thermocline.proxy.server.handshake.Hello;
import io.thermocline.proxy.server.sessions.Sessions;
import io.thermocline.proxy.session.TransactionPins;
import io.thermocline.proxy.tiered.TieredRouting;
import io.thermocline.security.roles.Privileges;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.RawBsonDocument;

/**
 * Hands each decoded request to the handler of its role: the handshake, the cursor commands, the
 * session commands, the tiered layer (when it claims the command), or plain forwarding to the archive.
 * Every command but hello passes {@link Authentication} first.
 */
final class CommandDispatcher implements RequestHandler {
    private final ProxyServer server;
    private final TieredRouting tiered;
    private final ClientReplies replies;
    private final ErrorMapping errors;
    private final Forwarder forwarder;
    private final Hello hello;
    private final Authentication authentication;
    private final GetMore getMore;
    private final KillCursors killCursors;
    private final OrphanCursors orphans;
    private final Sessions sessions;
    private final PassThrough passThrough;
    private final CursorRegistry cursors;

    CommandDispatcher(
            ProxyServer server,
            Forwarding forwarding,
            Hello hello,
            CursorRegistry cursors,
            TieredRouting tiered,
            ProxyMetrics metrics,
            CursorPeers peers) {
        this.server = server;
        this.tiered = tiered;
        this.cursors = cursors;
        this.hello = hello;
        this.replies = forwarding.replies();
        this.errors = forwarding.errors();
        TransactionPins pins = forwarding.pins();
        this.forwarder = forwarding.forwarder();
        this.authentication = new Authentication(server.security(), replies);
        this.orphans = new OrphanCursors(cursors, forwarder, metrics);
        this.getMore = new GetMore(
                cursors,
                forwarder,
                replies,
                errors,
                tiered == null ? null : tiered::filterBatch,
                peers,
                tiered == null ? GetMore.RoundGate.OPEN : this::cursorRound,
                orphans);
        this.killCursors = new KillCursors(cursors, forwarder, replies, peers);
        this.passThrough = new PassThrough(forwarder, replies, errors);
        this.sessions = new Sessions(pins, orphans, passThrough, forwarder);
    }

    @Override
    public CompletableFuture<Void> handle(Request request) {
        if (Hello.isHello(request.name())) {
            return hello.handle(request);
        }
        server.requestStarted();
        CompletableFuture<Void> result;
        try {
            result = tracked(request);
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.whenComplete((v, e) -> server.requestFinished());
    }

    private CompletableFuture<Void> tracked(Request request) {
        if (server.isDraining()) {
            return replies.reply(
                    request,
                    MongoError.SHUTDOWN_IN_PROGRESS.reply(
                            "the Thermocline proxy is shutting down", List.of("RetryableWriteError")));
        }
        // Security hook (issue 15): authentication commands, and the check every command passes first.
        Optional<CompletableFuture<Void>> answered = authentication.intercept(request);
        if (answered.isPresent()) {
            return answered.get();
        }
        if (WriteRefusals.writes(request.name())) {
            Optional<String> refusing = server.writeRefusals().current();
            if (refusing.isPresent()) {
                // before any tier sees it: nothing is acknowledged that the storage cannot keep
                return replies.reply(
                        request,
                        MongoError.EXCEEDED_TIME_LIMIT.reply(
                                "write refused, not applied: " + refusing.get()
                                        + "; retry once the storage takes writes again",
                                List.of(
                                        request.traits().inTransaction()
                                                ? "TransientTransactionError"
                                                : "RetryableWriteError")));
            }
        }
        return routed(Sessions.ownedByUser(request));
    }

    private CompletableFuture<Void> routed(Request request) {
        sessions.used(request);
        return switch (request.name()) {
            case "ping" -> replies.reply(request, forwarder.withClusterTime(new BsonDocument("ok", new BsonDouble(1))));
            case "getMore" -> getMore.handle(request);
            case "killCursors" -> killCursors.handle(request);
            case "endSessions" -> sessions.endSessions(request);
            case "listDatabases" -> listDatabases(request);
            case "listCollections" -> listCollections(request);
            default -> tiered == null ? passThrough.handle(request) : tiered(request);
        };
    }

    /**
     * listCollections asking for the user's own collections ({@code nameOnly}, {@code authorizedCollections}) from the
     * archive, all names in one batch, showing only those the user holds a privilege on (as mongod); others as usual.
     */
    private CompletableFuture<Void> listCollections(Request request) {
        Optional<Privileges> own = server.security()
                .ownCollections(request.client().auth(), request.msg().body());
        if (own.isEmpty()) {
            return tiered == null ? passThrough.handle(request) : tiered(request);
        }
        OpMsg msg = request.msg();
        OpMsg sent = new OpMsg(
                msg.requestId(), 0, msg.flagBits(), OpMsg.raw(AuthorizedCollections.inOneBatch(msg.body())), List.of());
        return passThrough.edited(
                request.inBackendSessions(sent),
                reply -> AuthorizedCollections.filter(reply, request.database(), own.get()));
    }

    /**
     * listDatabases from the archive (with the fast tier's disk added to databases holding tiered collections),
     * showing the user only the databases it holds privileges in (as mongod). Here, not in the tiered layer: the
     * filter applies on every proxy, tiered or not, so it stays in one place, and the tiered layer gives its sum back
     * unsent (docs/architecture.md).
     */
    private CompletableFuture<Void> listDatabases(Request request) {
        UnaryOperator<RawBsonDocument> shown = server.security()
                                .databases(
                                        request.client().auth(), request.msg().body())
                        instanceof AuthorizedDatabases.Only only
                ? reply -> AuthorizedDatabases.filter(reply, only.privileges())
                : UnaryOperator.identity();
        Optional<CompletableFuture<RawBsonDocument>> summed =
                tiered == null ? Optional.empty() : tiered.listDatabases(request);
        if (summed.isPresent()) {
            return summed.get()
                    .thenCompose(out -> OpMsg.isOk(out)
                            ? replies.finish(request, shown.apply(out), true, 0)
                            : replies.finish(request, out, false, 0))
                    .exceptionallyCompose(e -> errors.unavailable(request, e));
        }
        return passThrough.edited(request, shown);
    }

    /**
     * Offers the command to the tiered layer, which serves it to the reply (through each tier's gateway); unclaimed
     * ones pass through.
     */
    private CompletableFuture<Void> tiered(Request request) {
        // the mode ticket is held until the reply is sent: the fleet's mode switch waits for it (proxy/mode)
        ModeGate.Ticket ticket = tiered.modes().gate().enter();
        CompletableFuture<Void> done;
        try {
            done = tiered.serve(request, ticket).orElseGet(() -> passThrough.observed(request, ticket::archiveReplied));
        } catch (RuntimeException e) {
            ticket.close();
            throw e;
        }
        return done.whenComplete((v, e) -> ticket.close());
    }

    /** A getMore round holds a mode ticket like every tiered command, so a phase switch waits for rounds in flight. */
    private GetMore.Admission cursorRound(CursorRoute route, boolean inTransaction) {
        ModeGate.Ticket ticket = tiered.modes().gate().enter();
        try {
            boolean openedBeforeRestore = cursors.openedNanos(route.proxyId()).stream()
                    .anyMatch(opened -> tiered.modes().gate().restoringAckedAfter(opened));
            return new GetMore.Admission(
                    tiered.refusedCursorRound(
                            route.proxyId(), route.namespace(), inTransaction, openedBeforeRestore, ticket),
                    ticket::close);
        } catch (RuntimeException e) {
            ticket.close();
            throw e;
        }
    }

    /**
     * A cursor command another replica forwarded to this one, the cursor's owner: the peer link is
     * authenticated with the cluster secret, and the forwarding replica authorized the command for its client.
     */
    CompletableFuture<Void> fromPeer(Request request, int hops) {
        return switch (request.name()) {
            case "getMore" -> getMore.handle(request, hops);
            case "killCursors" -> killCursors.handle(request, hops);
            default ->
                replies.reply(
                        request, MongoError.COMMAND_NOT_SUPPORTED.reply("the peer link carries cursor commands only"));
        };
    }

    /** A client connection closed: kill the cursors nobody can continue any more. */
    void connectionClosed(long connectionId) {
        sessions.connectionClosed(connectionId);
    }

    /** Drops mappings of cursors idle past {@code idle} and kills them on their member in case they survive. */
    void sweepIdleCursors(Duration idle) {
        orphans.sweepIdle(idle);
    }
}
