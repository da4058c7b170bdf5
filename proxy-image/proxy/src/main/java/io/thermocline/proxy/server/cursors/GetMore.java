package io.thermocline.proxy.server.cursors;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.ReplyFacts;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.server.forwarding.ErrorMapping;
import io.thermocline.proxy.server.forwarding.Forwarder;
import io.thermocline.proxy.server.forwarding.TierBackend;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.WireCodec;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * getMore on a proxy cursor: to the member that holds the backend cursor, with the backend's id.
 * With {@code exhaustAllowed} the proxy streams: it keeps asking the member for batches and sends
 * each with moreToCome until the cursor is done, so the pooled backend connection stays request/reply.
 */
public final class GetMore {
    private final CursorRegistry cursors;
    private final Forwarder forwarder;
    private final ClientReplies replies;
    private final ErrorMapping errors;
    /** The tiered layer's look at a batch before the client sees it (null without tiering). */
    private final BiFunction<Long, RawBsonDocument, CompletableFuture<RawBsonDocument>> batchFilter;

    public GetMore(CursorRegistry cursors, Forwarder forwarder, ClientReplies replies, ErrorMapping errors,
                   BiFunction<Long, RawBsonDocument, CompletableFuture<RawBsonDocument>> batchFilter) {
        this.cursors = cursors;
        this.forwarder = forwarder;
        this.replies = replies;
        this.errors = errors;
        this.batchFilter = batchFilter;
    }

    public CompletableFuture<Void> handle(Request request) {
        BsonValue idValue = request.traits().cursorId();
        if (idValue == null || !idValue.isNumber()) {
            return replies.reply(request, MongoError.TYPE_MISMATCH.reply("getMore must be a 64-bit cursor id"));
        }
        long proxyId = idValue.asNumber().longValue();
        Optional<CursorRoute> found = cursors.use(proxyId, System.nanoTime());
        if (found.isEmpty()) {
            String why = cursors.ids().ownedHere(proxyId) ? "" : " (it was not opened through this proxy instance)";
            return replies.reply(request, MongoError.CURSOR_NOT_FOUND.reply("cursor id " + proxyId + " not found" + why));
        }
        CursorRoute route = found.get();
        if (!request.client().auth().mayContinueCursorOf(route.creator())) {
            // as mongod: refused, and the cursor stays its creator's
            return replies.reply(request, MongoError.UNAUTHORIZED.reply("cursor id " + proxyId + " was not created by the authenticated user"));
        }
        TierBackend tier = forwarder.backends().tier(route.tier());
        return forwarder.member(tier, request.traits(), Optional.of(route.member()))
                .thenCompose(member -> round(request, route, tier, member, request.msg().requestId()))
                .exceptionallyCompose(e -> {
                    cursors.remove(proxyId);
                    replies.metrics().openCursors(cursors.size());
                    return errors.unavailable(request, e);
                });
    }

    private CompletableFuture<Void> round(Request request, CursorRoute route, TierBackend tier, ServerAddress member,
                                          int respondTo) {
        OpMsg msg = request.msg();
        OpMsg toMember = forwarder.toMember(tier, member, msg, Map.of("getMore", new BsonInt64(route.backendId())));
        return forwarder.roundTrip(tier, member, toMember, request.client().eventLoop())
                .thenCompose(reply -> batchFilter == null ? CompletableFuture.completedFuture(reply.body())
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
                    boolean stream = msg.exhaustAllowed() && backendId != 0 && request.client().isOpen();
                    if (!stream) {
                        return replies.finish(request, out, ok, respondTo);
                    }
                    OpMsg part = new OpMsg(WireCodec.nextRequestId(), respondTo, OpMsg.MORE_TO_COME, out, List.of());
                    return request.client().send(part, request.compressor())
                            .thenCompose(v -> round(request, route, tier, member, part.requestId()));
                });
    }
}
