package io.thermocline.proxy.server.cursors;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.ReplyFacts;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.cursor.CursorSessions;
import io.thermocline.proxy.gateway.ErrorMapping;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.gateway.TierBackend;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.WireCodec;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.bson.BsonInt64;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * getMore on a proxy cursor: to the member that holds the backend cursor, with the backend's id.
 * With {@code exhaustAllowed} the proxy streams: it keeps asking the member for batches and sends
 * each with moreToCome until the cursor is done, so the pooled backend connection stays request/reply.
 */
public final class GetMore {

    /** The tiered layer's say on each getMore round before it reaches the member (docs/backup.md, restoring). */
    @FunctionalInterface
    public interface RoundGate {
        /** Every round runs (no tiering). */
        RoundGate OPEN = (route, inTransaction) -> new Admission(Optional.empty(), () -> {});

        Admission admit(CursorRoute route, boolean inTransaction);
    }

    /**
     * One round's admission: {@code refusal}, when present, is sent instead of running the round, and the cursor ends;
     * {@code release} runs once the round's reply is sent (idempotent).
     */
    public record Admission(Optional<RawBsonDocument> refusal, Runnable release) {}

    private final CursorRegistry cursors;
    private final Forwarder forwarder;
    private final ClientReplies replies;
    private final ErrorMapping errors;
    /** The tiered layer's look at a batch before the client sees it (null without tiering). */
    private final BiFunction<Long, RawBsonDocument, CompletableFuture<RawBsonDocument>> batchFilter;

    private final CursorPeers peers;
    private final RoundGate gate;
    private final OrphanCursors orphans;

    public GetMore(
            CursorRegistry cursors,
            Forwarder forwarder,
            ClientReplies replies,
            ErrorMapping errors,
            BiFunction<Long, RawBsonDocument, CompletableFuture<RawBsonDocument>> batchFilter,
            CursorPeers peers,
            RoundGate gate,
            OrphanCursors orphans) {
        this.cursors = cursors;
        this.gate = gate;
        this.orphans = orphans;
        this.peers = peers;
        this.forwarder = forwarder;
        this.replies = replies;
        this.errors = errors;
        this.batchFilter = batchFilter;
    }

    public CompletableFuture<Void> handle(Request request) {
        return handle(request, 0);
    }

    /** {@code hops}: how many replicas the command passed before this one (0 from a client). */
    public CompletableFuture<Void> handle(Request request, int hops) {
        BsonValue idValue = request.traits().cursorId();
        if (idValue == null || !idValue.isNumber()) {
            return replies.reply(request, MongoError.TYPE_MISMATCH.reply("getMore must be a 64-bit cursor id"));
        }
        Optional<RawBsonDocument> malformed =
                malformedCollection(request.msg().body().get("collection"));
        if (malformed.isPresent()) {
            return replies.reply(request, malformed.get());
        }
        long proxyId = idValue.asNumber().longValue();
        Optional<CursorRoute> found = cursors.use(proxyId, System.nanoTime());
        if (found.isEmpty()) {
            if (cursors.ids().ownedHere(proxyId)) {
                return replies.reply(request, MongoError.CURSOR_NOT_FOUND.reply("cursor id " + proxyId + " not found"));
            }
            CursorPeers.Owner owner = OwnerLookup.of(peers, proxyId, hops);
            if (owner instanceof CursorPeers.Peer peer) {
                return forwarded(request, peer, hops + 1, request.msg().requestId());
            }
            return replies.reply(
                    request,
                    MongoError.CURSOR_NOT_FOUND.reply(
                            "cursor id " + proxyId + " not found: " + ((CursorPeers.Gone) owner).why()));
        }
        CursorRoute route = found.get();
        Optional<RawBsonDocument> otherSession = CursorSessions.refusal(
                route,
                request.traits().lsid(),
                request.clientLsid(),
                request.client().auth().userName(),
                request.client().auth().enforced());
        if (otherSession.isPresent()) {
            // as mongod: a cursor opened in a session continues only in it, and stays open
            return replies.reply(request, otherSession.get());
        }
        if (!request.client().auth().mayContinueCursorOf(route.creator())) {
            // as mongod: refused, and the cursor stays its creator's
            return replies.reply(
                    request,
                    MongoError.UNAUTHORIZED.reply(
                            "cursor id " + proxyId + " was not created by the authenticated user"));
        }
        String requested = request.traits().database() + "."
                + request.msg().body().getString("collection").getValue();
        if (route.namespace().contains(".") && !requested.equals(route.namespace())) {
            // as mongod: a cursor continues only on the namespace it was opened on (and stays open)
            return replies.reply(
                    request,
                    MongoError.UNAUTHORIZED.reply("Requested getMore on namespace '" + requested
                            + "', but cursor belongs to a different namespace " + route.namespace()));
        }
        TierBackend tier = forwarder.backends().tier(route.tier());
        return forwarder
                .member(tier, request.traits(), Optional.of(route.member()))
                .thenCompose(member ->
                        round(request, route, tier, member, request.msg().requestId()))
                .exceptionallyCompose(e -> {
                    cursors.remove(proxyId);
                    replies.metrics().openCursors(cursors.size());
                    return errors.unavailable(request, e);
                });
    }

    /** mongod's parse errors for getMore's {@code collection}, which it checks before it looks the cursor up. */
    private static Optional<RawBsonDocument> malformedCollection(BsonValue collection) {
        if (collection == null) {
            return Optional.of(
                    MongoError.MISSING_FIELD.reply("BSON field 'getMore.collection' is missing but a required field"));
        }
        if (!collection.isString()) {
            return Optional.of(MongoError.TYPE_MISMATCH.reply("BSON field 'getMore.collection' is the wrong type '"
                    + typeName(collection.getBsonType()) + "', expected type 'string'"));
        }
        if (collection.asString().getValue().isEmpty()) {
            return Optional.of(MongoError.INVALID_NAMESPACE.reply("Collection names cannot be empty"));
        }
        return Optional.empty();
    }

    /** The type as mongod's messages name it ({@code $type} aliases). */
    private static String typeName(BsonType type) {
        return switch (type) {
            case DOCUMENT -> "object";
            case INT32 -> "int";
            case INT64 -> "long";
            case DOUBLE -> "double";
            case DECIMAL128 -> "decimal";
            case BOOLEAN -> "bool";
            case OBJECT_ID -> "objectId";
            case DATE_TIME -> "date";
            case BINARY -> "binData";
            default -> type.name().toLowerCase();
        };
    }

    /**
     * getMore on another replica's cursor: the owner answers in its own ids (the client's), so the reply
     * passes as is. Exhaust is carried out here, batch by batch, so the peer link stays request/reply.
     */
    private CompletableFuture<Void> forwarded(Request request, CursorPeers.Peer owner, int hops, int respondTo) {
        OpMsg msg = request.msg();
        return peers.call(owner, msg.body(), hops, request.client().auth())
                .thenCompose(body -> {
                    ReplyFacts facts = ReplyFacts.of(body);
                    boolean stream = msg.exhaustAllowed()
                            && facts.ok()
                            && facts.cursorId() != 0
                            && request.client().isOpen();
                    if (!stream) {
                        return replies.finish(request, body, facts.ok(), respondTo);
                    }
                    OpMsg part = new OpMsg(WireCodec.nextRequestId(), respondTo, OpMsg.MORE_TO_COME, body, List.of());
                    return request.client()
                            .send(part, request.compressor())
                            .thenCompose(v -> forwarded(request, owner, hops, part.requestId()));
                })
                .exceptionallyCompose(e -> replies.finish(
                        request,
                        Forwarder.unwrap(e) instanceof PeerBusyException busy
                                ? MongoError.HOST_UNREACHABLE.reply("getMore not forwarded to proxy replica "
                                        + owner.instanceId() + ": " + busy.getMessage())
                                : MongoError.CURSOR_NOT_FOUND.reply("cursor id "
                                        + request.traits().cursorId().asNumber().longValue()
                                        + " not found: its owner, proxy replica "
                                        + owner.instanceId() + ", stopped answering ("
                                        + Forwarder.unwrap(e).getMessage()
                                        + "); its cursors ended with it"),
                        false,
                        respondTo));
    }

    private CompletableFuture<Void> round(
            Request request, CursorRoute route, TierBackend tier, ServerAddress member, int respondTo) {
        Admission admission = gate.admit(route, request.traits().inTransaction());
        if (admission.refusal().isPresent()) {
            // drivers do not retry a getMore: the cursor fails here, and is gone for a getMore the application tries
            // again
            cursors.remove(route.proxyId()).ifPresent(ended -> orphans.kill(List.of(ended)));
            return replies.finish(request, admission.refusal().get(), false, respondTo)
                    .whenComplete((v, e) -> admission.release().run());
        }
        OpMsg msg = request.msg();
        OpMsg toMember = forwarder.toMember(tier, member, msg, Map.of("getMore", new BsonInt64(route.backendId())));
        return forwarder
                .roundTrip(tier, member, toMember, request.client().eventLoop())
                .thenCompose(reply -> batchFilter == null
                        ? CompletableFuture.completedFuture(reply.body())
                        : batchFilter.apply(route.proxyId(), reply.body()))
                .thenCompose(body -> {
                    ReplyFacts facts = forwarder.observe(tier, member, body);
                    boolean ok = facts.ok();
                    long backendId = ok ? facts.cursorId() : 0;
                    RawBsonDocument out = body;
                    if (backendId == 0) {
                        cursors.remove(route.proxyId());
                        replies.metrics().openCursors(cursors.size());
                    } else {
                        out = facts.withCursorId(body, route.proxyId());
                    }
                    boolean stream = msg.exhaustAllowed()
                            && backendId != 0
                            && request.client().isOpen();
                    if (!stream) {
                        return replies.finish(request, out, ok, respondTo);
                    }
                    OpMsg part = new OpMsg(WireCodec.nextRequestId(), respondTo, OpMsg.MORE_TO_COME, out, List.of());
                    // each streamed batch is a round of its own: a mode switch waits for one batch, not the whole
                    // stream
                    return request.client().send(part, request.compressor()).thenCompose(v -> {
                        admission.release().run();
                        return round(request, route, tier, member, part.requestId());
                    });
                })
                .whenComplete((v, e) -> admission.release().run());
    }
}
