package io.thermocline.proxy.server.sessions;

import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.command.CommandEnvelope;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.cursor.CursorOwner;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.gateway.TierBackend;
import io.thermocline.proxy.server.cursors.OrphanCursors;
import io.thermocline.proxy.server.forwarding.PassThrough;
import io.thermocline.proxy.session.BackendSessionIds;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.session.SessionUsage;
import io.thermocline.proxy.session.TransactionPins;
import io.thermocline.security.UserName;
import io.thermocline.wire.OpMsg;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logical sessions as the proxy follows them: which connections use each, and what ends one
 * (endSessions, or the last connection that used it closing): its transaction pin is released and
 * its cursors are killed.
 */
public final class Sessions {
    private static final Logger LOG = LoggerFactory.getLogger(Sessions.class);
    private final SessionUsage usage = new SessionUsage();
    private final TransactionPins pins;
    private final OrphanCursors orphans;
    private final PassThrough passThrough;
    private final Forwarder forwarder;
    /** Transactions started on load-balanced connections, by connection: they end when it closes. */
    private final Map<Long, Map<SessionKey, Long>> pinnedToConnection = new ConcurrentHashMap<>();

    public Sessions(TransactionPins pins, OrphanCursors orphans, PassThrough passThrough, Forwarder forwarder) {
        this.pins = pins;
        this.orphans = orphans;
        this.passThrough = passThrough;
        this.forwarder = forwarder;
    }

    /**
     * The request as the backend must see it: where authorization is enforced, every session it names
     * ({@code lsid}, and the lists of endSessions, killSessions and refreshSessions) replaced by the
     * backend session of the connection's user ({@link BackendSessionIds}), so that one user can never
     * reach another's transaction, retryable writes or cursors by sending its session id. Called where
     * the request enters, before any handler or record sees the session; without authorization the
     * sessions pass as sent (one backend session per id, as on a mongod without {@code --auth}).
     */
    public static Request ownedByUser(Request request) {
        if (!request.client().auth().enforced()) {
            return request;
        }
        BsonDocument lsid = request.traits().lsid();
        boolean lists = BackendSessionIds.LISTING_SESSIONS.contains(request.name());
        if (lsid == null && !lists) {
            return request;
        }
        UserName user = request.client().auth().userName();
        Map<String, BsonValue> replace = new HashMap<>();
        BsonDocument backendLsid = lsid == null ? null : BackendSessionIds.backendLsid(lsid, user);
        if (lsid != null) {
            replace.put("lsid", backendLsid);
        }
        if (lists) {
            BsonValue listed = request.msg().body().get(request.name());
            replace.put(request.name(), BackendSessionIds.backendLsids(listed, user));
        }
        OpMsg m = request.msg();
        RawBsonDocument body = CommandEnvelope.edit(m.body(), replace, Set.of(), new BsonDocument());
        // only the sessions changed: the traits are the request's, with the backend's lsid
        return request.inBackendSessions(
                new OpMsg(m.requestId(), m.responseTo(), m.flagBits(), body, m.sequences()), backendLsid);
    }

    /** Notes the session a request runs in, on the connection it came on. */
    public void used(Request request) {
        Optional<SessionKey> session = request.traits().session();
        session.ifPresent(s -> usage.used(s, request.connectionId()));
        if (session.isPresent()
                && request.traits().startsTransaction()
                && request.client().loadBalanced()) {
            pinnedToConnection
                    .computeIfAbsent(request.connectionId(), c -> new ConcurrentHashMap<>())
                    .put(session.get(), request.traits().txnNumber());
        }
    }

    /** endSessions goes to the archive as sent; then the proxy forgets the sessions' pins and kills their cursors. */
    public CompletableFuture<Void> endSessions(Request request) {
        return passThrough
                .handle(request)
                .whenComplete((v, e) -> ended(request.msg().body().get("endSessions")));
    }

    private void ended(BsonValue ended) {
        if (ended == null || !ended.isArray()) {
            return;
        }
        for (BsonValue lsid : ended.asArray()) {
            if (lsid.isDocument() && lsid.asDocument().get("id") != null) {
                SessionKey key = new SessionKey(lsid.asDocument().get("id"));
                usage.ended(key);
                pins.release(key);
                orphans.kill(orphans.registry().removeOwnedBy(new CursorOwner.Session(key)));
            }
        }
    }

    /** A client connection closed: kill the cursors nobody can continue any more. */
    public void connectionClosed(long connectionId) {
        abortTransactionsOf(connectionId);
        List<CursorRoute> orphaned =
                new ArrayList<>(orphans.registry().removeOwnedBy(new CursorOwner.Connection(connectionId)));
        for (SessionKey abandoned : usage.connectionClosed(connectionId)) {
            pins.release(abandoned);
            orphaned.addAll(orphans.registry().removeOwnedBy(new CursorOwner.Session(abandoned)));
        }
        orphans.kill(orphaned);
    }

    /**
     * The load-balancers spec: a load-balanced connection's transactions are pinned to it, and closing it
     * aborts them (the driver will not continue them elsewhere). A transaction already committed or
     * aborted has no pin any more and is left alone.
     */
    private void abortTransactionsOf(long connectionId) {
        Map<SessionKey, Long> started = pinnedToConnection.remove(connectionId);
        if (started == null) {
            return;
        }
        started.forEach((session, txnNumber) -> pins.find(session, txnNumber).ifPresent(pin -> {
            pins.release(session);
            BsonDocument abort = new BsonDocument("abortTransaction", new BsonInt32(1))
                    .append("lsid", new BsonDocument("id", session.id()))
                    .append("txnNumber", new BsonInt64(txnNumber))
                    .append("autocommit", BsonBoolean.FALSE)
                    .append("$db", new BsonString("admin"));
            TierBackend tier = forwarder.backends().tier(pin.tier());
            tier.clock().latest().ifPresent(ct -> abort.append("$clusterTime", ct));
            forwarder
                    .roundTrip(tier, pin.member(), OpMsg.request(BackendConnection.nextRequestId(), abort), null)
                    .whenComplete((reply, e) -> LOG.info(
                            "event=load_balanced_transaction_aborted connection={} tier={} member={} ok={}",
                            connectionId,
                            pin.tier().label(),
                            pin.member(),
                            e == null && OpMsg.isOk(reply.body())));
        }));
    }
}
