package io.thermocline.proxy.server.cursors;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.CommandEnvelope;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.gateway.TierBackend;
import io.thermocline.security.roles.Target;
import io.thermocline.wire.OpMsg;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * killCursors on proxy cursors: one killCursors per member with the backend ids, and one answer
 * in the client's ids (killed, not found, or unknown when the member could not be reached).
 */
public final class KillCursors {
    private final CursorRegistry cursors;
    private final Forwarder forwarder;
    private final ClientReplies replies;
    private final CursorPeers peers;

    public KillCursors(CursorRegistry cursors, Forwarder forwarder, ClientReplies replies, CursorPeers peers) {
        this.cursors = cursors;
        this.peers = peers;
        this.forwarder = forwarder;
        this.replies = replies;
    }

    public CompletableFuture<Void> handle(Request request) {
        return handle(request, 0);
    }

    /** {@code hops}: how many replicas the command passed before this one (0 from a client). */
    public CompletableFuture<Void> handle(Request request, int hops) {
        BsonValue list = request.msg().body().get("cursors");
        if (list == null || !list.isArray()) {
            return replies.reply(
                    request, MongoError.TYPE_MISMATCH.reply("killCursors needs a 'cursors' array of cursor ids"));
        }
        String named = namedNamespace(request);
        Optional<CursorRoute> foreign = othersCursor(request, list.asArray(), named);
        if (foreign.isPresent()) {
            // as mongod: the whole command is refused before any cursor is killed
            return replies.reply(
                    request,
                    MongoError.UNAUTHORIZED.reply(
                            "not authorized to kill cursor on " + foreign.get().namespace()));
        }
        Map<ServerAddress, List<CursorRoute>> byMember = new LinkedHashMap<>();
        Map<CursorPeers.Peer, BsonArray> byPeer = new LinkedHashMap<>();
        BsonArray notFound = new BsonArray();
        for (BsonValue v : list.asArray()) {
            long id = v.isNumber() ? v.asNumber().longValue() : 0;
            Optional<CursorRoute> route = cursors.use(id, System.nanoTime()).filter(r -> isOf(r, named));
            CursorPeers.Owner owner =
                    route.isPresent() || cursors.ids().ownedHere(id) ? null : OwnerLookup.of(peers, id, hops);
            if (route.isPresent()) {
                byMember.computeIfAbsent(route.get().member(), m -> new ArrayList<>())
                        .add(route.get());
            } else if (owner instanceof CursorPeers.Peer peer) {
                byPeer.computeIfAbsent(peer, p -> new BsonArray()).add(new BsonInt64(id));
            } else {
                notFound.add(new BsonInt64(id));
            }
        }
        BsonArray killed = new BsonArray();
        BsonArray unknown = new BsonArray();
        // the owners first: one refusing (another user's cursor, 13) refuses the whole command, as mongod does
        AtomicReference<RawBsonDocument> refused = new AtomicReference<>();
        List<CompletableFuture<Void>> forwards = new ArrayList<>();
        for (Map.Entry<CursorPeers.Peer, BsonArray> e : byPeer.entrySet()) {
            RawBsonDocument forward = CommandEnvelope.edit(
                    request.msg().body(), Map.of("cursors", e.getValue()), Set.of(), new BsonDocument());
            forwards.add(peers.call(
                            e.getKey(), forward, hops + 1, request.client().auth())
                    .handle((reply, error) -> {
                        synchronized (killed) {
                            if (error == null && OpMsg.isOk(reply)) {
                                copy(reply, "cursorsKilled", killed);
                                copy(reply, "cursorsNotFound", notFound);
                                copy(reply, "cursorsUnknown", unknown);
                            } else if (error == null
                                    && reply.isNumber("code")
                                    && reply.getNumber("code").intValue() == MongoError.UNAUTHORIZED.code()) {
                                refused.set(reply);
                            } else {
                                unknown.addAll(e.getValue());
                            }
                        }
                        return null;
                    }));
        }
        return CompletableFuture.allOf(forwards.toArray(CompletableFuture[]::new))
                .thenCompose(v -> {
                    if (refused.get() != null) {
                        return replies.reply(request, refused.get());
                    }
                    return killHere(request, byMember, killed, notFound, unknown);
                });
    }

    private CompletableFuture<Void> killHere(
            Request request,
            Map<ServerAddress, List<CursorRoute>> byMember,
            BsonArray killed,
            BsonArray notFound,
            BsonArray unknown) {
        byMember.values().forEach(routes -> routes.forEach(r -> cursors.remove(r.proxyId())));
        replies.metrics().openCursors(cursors.size());
        List<CompletableFuture<Void>> calls = new ArrayList<>();
        for (Map.Entry<ServerAddress, List<CursorRoute>> e : byMember.entrySet()) {
            List<CursorRoute> routes = e.getValue();
            TierBackend tier = forwarder.backends().tier(routes.get(0).tier());
            BsonArray backendIds = new BsonArray();
            routes.forEach(r -> backendIds.add(new BsonInt64(r.backendId())));
            OpMsg toMember = forwarder.toMember(tier, e.getKey(), request.msg(), Map.of("cursors", backendIds));
            calls.add(forwarder.roundTrip(tier, e.getKey(), toMember, null).handle((reply, error) -> {
                synchronized (killed) {
                    for (CursorRoute r : routes) {
                        if (error == null) {
                            forwarder.observe(tier, e.getKey(), reply.body());
                            (contains(reply.body(), "cursorsNotFound", r.backendId()) ? notFound : killed)
                                    .add(new BsonInt64(r.proxyId()));
                        } else {
                            unknown.add(new BsonInt64(r.proxyId()));
                        }
                    }
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            BsonDocument reply = new BsonDocument("cursorsKilled", killed)
                    .append("cursorsNotFound", notFound)
                    .append("cursorsAlive", new BsonArray())
                    .append("cursorsUnknown", unknown)
                    .append("ok", new BsonDouble(1));
            return replies.reply(request, forwarder.withClusterTime(reply));
        });
    }

    private static void copy(RawBsonDocument reply, String field, BsonArray into) {
        BsonValue v = reply.get(field);
        if (v != null && v.isArray()) {
            into.addAll(v.asArray());
        }
    }

    /**
     * The first listed cursor this connection's user may not kill: opened by another user, and no killAnyCursor on its
     * namespace. A cursor of another namespace than the command's is not found, not refused.
     */
    private Optional<CursorRoute> othersCursor(Request request, BsonArray ids, String named) {
        for (BsonValue v : ids) {
            Optional<CursorRoute> route = v.isNumber()
                    ? cursors.use(v.asNumber().longValue(), System.nanoTime()).filter(r -> isOf(r, named))
                    : Optional.empty();
            if (route.isPresent()
                    && !request.client()
                            .auth()
                            .mayKillCursorOf(
                                    route.get().creator(),
                                    new Target.Collection(
                                            route.get().database(), route.get().collection()))) {
                return route;
            }
        }
        return Optional.empty();
    }

    /** {@code db.collection} the command names, or null when its {@code killCursors} is no collection name. */
    private static String namedNamespace(Request request) {
        BsonValue collection = request.msg().body().get("killCursors");
        return collection != null && collection.isString()
                ? request.traits().database() + "." + collection.asString().getValue()
                : null;
    }

    /**
     * Whether a killCursors naming {@code named} reaches this cursor: only one of that namespace, as mongos 5.0 keys its
     * cursors by namespace (mongod 5.0+ kills by id alone; drivers always name the cursor's own namespace).
     */
    private static boolean isOf(CursorRoute route, String named) {
        return named == null
                || !route.namespace().contains(".")
                || route.namespace().equals(named);
    }

    private static boolean contains(RawBsonDocument reply, String field, long id) {
        BsonValue v = reply.get(field);
        if (v == null || !v.isArray()) {
            return false;
        }
        for (BsonValue x : v.asArray()) {
            if (x.isNumber() && x.asNumber().longValue() == id) {
                return true;
            }
        }
        return false;
    }
}
