package io.thermocline.proxy.server;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.cursor.CursorOwner;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.pool.BackendConnection;
import io.thermocline.proxy.pool.BackendUnavailableException;
import io.thermocline.proxy.pool.MemberPool;
import io.thermocline.proxy.pool.PoolTimeoutException;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.session.SessionUsage;
import io.thermocline.proxy.session.TransactionPins;
import io.thermocline.proxy.tiered.TieredRequest;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.MemberDescription;
import io.thermocline.proxy.topology.MemberRole;
import io.thermocline.proxy.topology.MemberSelector;
import io.thermocline.proxy.topology.ReadPreference;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.proxy.topology.WireLimits;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import io.thermocline.wire.WireCodec;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Handles one client request: answers the handshake itself, and forwards every other command
 * to the member that must serve it, translating what differs between a mongos and a
 * replica-set member (cursor ids, cluster-time gossip, read preference, transaction pinning).
 */
final class CommandDispatcher {
    private static final Logger LOG = LoggerFactory.getLogger(CommandDispatcher.class);

    /** Fields a mongos accepts that must not reach a member as the client sent them. */
    private static final Set<String> MONGOS_ONLY = Set.of("$readPreference", "$clusterTime", "recoveryToken");
    private static final Set<Integer> STATE_CHANGE_CODES = Set.of(91, 189, 10107, 11600, 11602, 13435, 13436);

    private final ProxyServer server;
    private final Handshake handshake;
    private final CursorRegistry cursors;
    private final SessionUsage sessions = new SessionUsage();
    private final TransactionPins pins = new TransactionPins();
    private final ProxyMetrics metrics;
    private final AtomicInteger spread = new AtomicInteger();

    CommandDispatcher(ProxyServer server, Handshake handshake, CursorRegistry cursors, ProxyMetrics metrics) {
        this.server = server;
        this.handshake = handshake;
        this.cursors = cursors;
        this.metrics = metrics;
    }

    CompletableFuture<Void> dispatch(ClientConnection client, Inbound inbound) {
        if (inbound.message() instanceof OpQuery query) {
            return legacyQuery(client, query, inbound.compressedWith());
        }
        if (inbound.message() instanceof OpMsg msg) {
            return command(client, msg, inbound.compressedWith());
        }
        client.sendAndClose(OpMsg.reply(inbound.message().requestId(), ErrorReplies.error(ErrorReplies.PROTOCOL_ERROR,
                "ProtocolError", "clients send OP_MSG or OP_QUERY, not " + inbound.message().getClass().getSimpleName(), List.of())));
        return CompletableFuture.completedFuture(null);
    }

    /** A connection past {@code maxClientConnections} gets one clear error, then is closed. */
    CompletableFuture<Void> rejectOverLimit(ClientConnection client, Inbound inbound) {
        String message = "Thermocline proxy connection limit reached: " + server.settings().maxClientConnections()
                + " client connections are open (proxy.maxClientConnections); close idle clients, lower the driver's"
                + " maxPoolSize, or raise the limit";
        BsonDocument error = ErrorReplies.error(ErrorReplies.OPERATION_FAILED, "OperationFailed", message, List.of());
        if (inbound.message() instanceof OpQuery q) {
            client.sendAndClose(OpReply.reply(q.requestId(), error));
        } else {
            client.sendAndClose(OpMsg.reply(inbound.message().requestId(), error));
        }
        return CompletableFuture.completedFuture(null);
    }

    // ---- handshake -------------------------------------------------------------------------

    private CompletableFuture<Void> legacyQuery(ClientConnection client, OpQuery query, Compressor compressor) {
        long start = System.nanoTime();
        BsonDocument q = query.query();
        if (q.containsKey("$query") && q.get("$query").isDocument()) {
            q = q.getDocument("$query");
        }
        String name = q.isEmpty() ? "" : q.getFirstKey();
        if (!query.isCommand() || !(name.equals("hello") || name.equalsIgnoreCase("isMaster"))) {
            BsonDocument error = ErrorReplies.error(ErrorReplies.UNSUPPORTED_OP_QUERY_COMMAND, "UnsupportedOpQueryCommand",
                    "Unsupported OP_QUERY command: " + (query.isCommand() ? name : "query on " + query.fullCollectionName())
                            + ". The client driver may require an upgrade; OP_QUERY is only accepted for the hello handshake",
                    List.of());
            metrics.commandFinished("legacyQuery", "error", System.nanoTime() - start);
            return client.send(OpReply.reply(query.requestId(), error), compressor);
        }
        BsonDocument request = q;
        return helloDocument(client, name, request).thenCompose(reply -> {
            metrics.commandFinished(name, reply.getNumber("ok").intValue() == 1 ? "ok" : "error", System.nanoTime() - start);
            return client.send(OpReply.reply(query.requestId(), reply), compressor);
        });
    }

    private CompletableFuture<BsonDocument> helloDocument(ClientConnection client, String name, BsonDocument request) {
        List<Compressor> agreed = handshake.negotiate(request);
        boolean lb = Handshake.asksLoadBalanced(request);
        return server.advertisedLimits().handle((limits, error) -> {
            if (error != null) {
                return ErrorReplies.error(ErrorReplies.HOST_UNREACHABLE, "HostUnreachable",
                        "the proxy cannot reach its backend yet: " + rootMessage(error), List.of());
            }
            client.negotiated(agreed, lb);
            // Never invite a message larger than the proxy itself accepts.
            WireLimits advertised = new WireLimits(limits.minWireVersion(), limits.maxWireVersion(), limits.maxBsonObjectSize(),
                    Math.min(limits.maxMessageSizeBytes(), server.settings().maxMessageSizeBytes()),
                    limits.maxWriteBatchSize(), limits.logicalSessionTimeoutMinutes());
            return handshake.reply(name, request, advertised, client.id(), agreed, lb,
                    server.archive().clock().latest().orElse(null));
        }).thenCompose(reply -> server.security().hello(client.auth(), request, reply)); // security hook 2 (issue 15)
    }

    private CompletableFuture<Void> hello(ClientConnection client, OpMsg msg, Compressor compressor, String name) {
        long start = System.nanoTime();
        BsonDocument request = msg.body();
        if (handshake.isAwaitable(request) && handshake.isCurrent(request)) {
            long waitMs = Math.max(0, request.getNumber("maxAwaitTimeMS").longValue());
            return awaitableHello(client, msg.requestId(), name, request, compressor, waitMs, msg.exhaustAllowed());
        }
        return helloDocument(client, name, request).thenCompose(reply -> {
            metrics.commandFinished(name, reply.getNumber("ok").intValue() == 1 ? "ok" : "error", System.nanoTime() - start);
            return client.send(OpMsg.reply(msg.requestId(), reply), compressor);
        });
    }

    /**
     * The streaming monitor protocol: nothing about the proxy changes while it runs, so it
     * answers after {@code maxAwaitTimeMS}; with exhaust it keeps answering (moreToCome) until
     * the client hangs up, each reply responding to the previous one.
     */
    private CompletableFuture<Void> awaitableHello(ClientConnection client, int responseTo, String name, BsonDocument request,
                                                   Compressor compressor, long waitMs, boolean exhaust) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        client.channel().eventLoop().schedule(() -> {
            if (!client.isOpen()) {
                done.complete(null);
                return;
            }
            helloDocument(client, name, request).thenAccept(reply -> {
                OpMsg out = OpMsg.reply(responseTo, reply);
                boolean more = exhaust && !server.isDraining();
                if (more) {
                    out = out.withFlagBits(OpMsg.MORE_TO_COME);
                }
                OpMsg sent = out;
                client.send(sent, compressor).whenComplete((v, e) -> {
                    if (e != null || !more) {
                        done.complete(null);
                    } else {
                        awaitableHello(client, sent.requestId(), name, request, compressor, waitMs, true)
                                .whenComplete((v2, e2) -> done.complete(null));
                    }
                });
            });
        }, waitMs, TimeUnit.MILLISECONDS);
        return done;
    }

    // ---- commands --------------------------------------------------------------------------

    private CompletableFuture<Void> command(ClientConnection client, OpMsg msg, Compressor compressor) {
        String name = msg.commandName();
        if (name.equals("hello") || name.equalsIgnoreCase("isMaster")) {
            return hello(client, msg, compressor, name);
        }
        long start = System.nanoTime();
        server.requestStarted();
        CompletableFuture<Void> result;
        try {
            result = tracked(client, msg, compressor, name, start);
        } catch (RuntimeException e) {
            result = CompletableFuture.failedFuture(e);
        }
        return result.whenComplete((v, e) -> server.requestFinished());
    }

    private CompletableFuture<Void> tracked(ClientConnection client, OpMsg msg, Compressor compressor, String name, long start) {
        if (server.isDraining()) {
            return reply(client, msg, compressor, name, start, ErrorReplies.error(ErrorReplies.SHUTDOWN_IN_PROGRESS,
                    "ShutdownInProgress", "the Thermocline proxy is shutting down", List.of("RetryableWriteError")));
        }
        // Security hook (issue 15): authentication commands, and the check every command passes first.
        Optional<CompletableFuture<BsonDocument>> answered = server.security().intercept(client.auth(), msg);
        if (answered.isPresent()) {
            return answered.get().thenCompose(out -> reply(client, msg, compressor, name, start, out));
        }
        BsonDocument body = msg.body();
        CommandTraits traits = CommandTraits.of(name, body);
        traits.session().ifPresent(s -> sessions.used(s, client.id()));
        return switch (name) {
            case "ping" -> reply(client, msg, compressor, name, start, withClusterTime(new BsonDocument("ok", new BsonDouble(1))));
            case "getMore" -> getMore(client, msg, compressor, start);
            case "killCursors" -> killCursors(client, msg, compressor, start);
            case "endSessions" -> forward(client, msg, compressor, name, start, traits).whenComplete((v, e) -> endSessions(body));
            default -> server.tiered() == null ? forward(client, msg, compressor, name, start, traits) : server.tiered()
                    .route(new TieredRequest(client.id(), msg), (tier, request) -> callTier(client, tier, request))
                    .map(reply -> reply.thenCompose(out -> finish(client, msg, compressor, name, start, out, isOk(out), 0))
                            .exceptionallyCompose(e -> unavailable(client, msg, compressor, name, start, traits, e)))
                    .orElseGet(() -> forward(client, msg, compressor, name, start, traits));
        };
    }

    /**
     * The tiered proxy's way to a tier: sends {@code msg} (already rewritten by the tiered layer) to the
     * tier's member the command needs, and hands back the reply with cursors mapped to proxy cursors.
     */
    private CompletableFuture<RawBsonDocument> callTier(ClientConnection client, Tier tierName, OpMsg msg) {
        TierBackend tier = server.tier(tierName);
        BsonDocument body = msg.body();
        String name = msg.commandName();
        CommandTraits traits = CommandTraits.of(name, body);
        Optional<SessionKey> session = traits.session();
        Optional<TransactionPins.Pin> pin = traits.inTransaction() && session.isPresent()
                ? pins.find(session.get(), traits.txnNumber()) : Optional.empty();
        CompletableFuture<ServerAddress> target;
        if (pin.isPresent()) {
            target = CompletableFuture.completedFuture(pin.get().member());
        } else if (traits.inTransaction() || traits.endsTransaction()) {
            target = tier.monitor().awaitPrimary(server.settings().primaryWaitTimeout()).thenApply(p -> {
                if (traits.inTransaction() && session.isPresent()) {
                    pins.pin(session.get(), traits.txnNumber(), tier.tier(), p);
                }
                return p;
            });
        } else {
            target = select(tier, ReadPreference.parse(traits.readPreference()));
        }
        return target.thenCompose(member -> roundTrip(tier, member, toMember(tier, member, msg, Map.of()), client.channel().eventLoop()).thenApply(reply -> {
            ReplyFacts facts = observe(tier, member, reply.body());
            if (traits.endsTransaction() && session.isPresent() && (name.equals("abortTransaction") || facts.ok())) {
                pins.release(session.get());
            }
            return registerCursor(client, tier, member, reply.body(), facts, body, traits);
        }));
    }

    private BsonDocument withClusterTime(BsonDocument reply) {
        server.archive().clock().latest().ifPresent(ct -> reply.append("$clusterTime", ct));
        return reply;
    }

    private CompletableFuture<Void> forward(ClientConnection client, OpMsg msg, Compressor compressor, String name, long start,
                                            CommandTraits traits) {
        TierBackend tier = server.archive();
        BsonDocument body = msg.body();
        Optional<SessionKey> session = traits.session();
        CompletableFuture<ServerAddress> target;
        Optional<TransactionPins.Pin> pin = traits.inTransaction() && session.isPresent()
                ? pins.find(session.get(), traits.txnNumber()) : Optional.empty();
        if (pin.isPresent()) {
            target = CompletableFuture.completedFuture(pin.get().member());
        } else if (traits.inTransaction() || traits.endsTransaction()) {
            target = tier.monitor().awaitPrimary(server.settings().primaryWaitTimeout()).thenApply(p -> {
                if (traits.inTransaction() && session.isPresent()) {
                    pins.pin(session.get(), traits.txnNumber(), tier.tier(), p);
                }
                return p;
            });
        } else {
            target = select(tier, ReadPreference.parse(traits.readPreference()));
        }
        return target.thenCompose(member -> {
            OpMsg request = toMember(tier, member, msg, Map.of());
            return roundTrip(tier, member, request, client.channel().eventLoop()).thenCompose(reply -> {
                ReplyFacts facts = observe(tier, member, reply.body());
                if (traits.endsTransaction() && session.isPresent()
                        && (name.equals("abortTransaction") || facts.ok())) {
                    pins.release(session.get());
                }
                RawBsonDocument out = registerCursor(client, tier, member, reply.body(), facts, body, traits);
                if (msg.moreToCome()) {
                    metrics.commandFinished(name, facts.ok() ? "ok" : "error", System.nanoTime() - start);
                    return CompletableFuture.<Void>completedFuture(null);
                }
                return finish(client, msg, compressor, name, start, out, facts.ok(), 0);
            });
        }).exceptionallyCompose(e -> unavailable(client, msg, compressor, name, start, traits, e));
    }

    private CompletableFuture<ServerAddress> select(TierBackend tier, ReadPreference preference) {
        TierTopology topology = tier.monitor().topology();
        Optional<ServerAddress> chosen = MemberSelector.select(topology, preference, spread.getAndIncrement());
        if (chosen.isPresent()) {
            return CompletableFuture.completedFuture(chosen.get());
        }
        // No eligible member right now (election, restart): wait for a primary, then choose again.
        return tier.monitor().awaitPrimary(server.settings().primaryWaitTimeout())
                .thenApply(p -> MemberSelector.select(tier.monitor().topology(), preference, spread.getAndIncrement()).orElse(p));
    }

    /** The client's command as a replica-set member must see it. */
    private OpMsg toMember(TierBackend tier, ServerAddress member, OpMsg msg, Map<String, BsonValue> replace) {
        BsonDocument append = new BsonDocument();
        MemberDescription d = tier.monitor().topology().members().get(member);
        if (d != null && d.role() == MemberRole.SECONDARY) {
            // A secondary serves a read only when the command says secondaries are acceptable.
            append.append("$readPreference", new BsonDocument("mode", new BsonString("secondaryPreferred")));
        }
        tier.clock().latest().ifPresent(ct -> append.append("$clusterTime", ct));
        RawBsonDocument body = CommandEnvelope.edit(msg.body(), replace, MONGOS_ONLY, append);
        // The proxy always waits for the member's reply, even for a client's fire-and-forget
        // write, so a pooled connection is never left with an unread reply.
        return new OpMsg(BackendConnection.nextRequestId(), 0, 0, body, msg.sequences());
    }

    private CompletableFuture<OpMsg> roundTrip(TierBackend tier, ServerAddress member, OpMsg request) {
        return roundTrip(tier, member, request, null);
    }

    private CompletableFuture<OpMsg> roundTrip(TierBackend tier, ServerAddress member, OpMsg request,
                                               io.netty.channel.EventLoop preferred) {
        MemberPool pool = tier.pool(member);
        return pool.borrow(preferred).thenCompose(conn -> conn.roundTrip(request, null).handle((reply, error) -> {
            if (error != null) {
                pool.discard(conn);
                tier.monitor().requestCheck();
                throw new CompletionException(unwrap(error));
            }
            pool.release(conn);
            return reply;
        })).exceptionallyCompose(e -> {
            Throwable cause = unwrap(e);
            if (!(cause instanceof BackendUnavailableException)) {
                return CompletableFuture.failedFuture(cause);
            }
            if (!member.equals(tier.monitor().topology().primary())) {
                tier.monitor().requestCheck();
                return CompletableFuture.failedFuture(cause);
            }
            // The primary is gone: answer once the election is visible, so the client's retry finds the new one.
            return tier.monitor().awaitPrimaryOtherThan(member, server.settings().primaryWaitTimeout())
                    .thenCompose(next -> CompletableFuture.<OpMsg>failedFuture(cause));
        });
    }

    /** Learns from every reply: the tier's cluster time, and whether the member stopped being primary. */
    private ReplyFacts observe(TierBackend tier, ServerAddress member, RawBsonDocument reply) {
        ReplyFacts facts = ReplyFacts.of(reply);
        if (facts.clusterTime() != null) {
            tier.clock().advance(facts.clusterTime());
        }
        if (!facts.ok() && STATE_CHANGE_CODES.contains(facts.code())) {
            LOG.info("event=member_state_change_error tier={} member={} code={}", tier.tier().label(), member, facts.code());
            tier.monitor().requestCheck();
        }
        return facts;
    }

    private RawBsonDocument registerCursor(ClientConnection client, TierBackend tier, ServerAddress member,
                                           RawBsonDocument reply, ReplyFacts facts, BsonDocument request, CommandTraits traits) {
        if (facts.cursorId() == 0) {
            return reply;
        }
        String ns = facts.cursorNs();
        Optional<SessionKey> session = traits.session();
        CursorOwner owner = session.isPresent() && !client.loadBalanced()
                ? new CursorOwner.Session(session.get()) : new CursorOwner.Connection(client.id());
        CursorRoute route = cursors.register(tier.tier(), member, facts.cursorId(),
                ns != null ? ns : request.getString("$db", new BsonString("")).getValue(),
                traits.lsid(), owner, traits.noCursorTimeout(), System.nanoTime());
        metrics.openCursors(cursors.size());
        return facts.withCursorId(reply, route.proxyId());
    }

    // ---- cursors ---------------------------------------------------------------------------

    private CompletableFuture<Void> getMore(ClientConnection client, OpMsg msg, Compressor compressor, long start) {
        BsonValue idValue = msg.body().get("getMore");
        if (idValue == null || !idValue.isNumber()) {
            return reply(client, msg, compressor, "getMore", start, ErrorReplies.error(14, "TypeMismatch",
                    "getMore must be a 64-bit cursor id", List.of()));
        }
        long proxyId = idValue.asNumber().longValue();
        Optional<CursorRoute> found = cursors.use(proxyId, System.nanoTime());
        if (found.isEmpty()) {
            String why = cursors.ids().ownedHere(proxyId) ? "" : " (it was not opened through this proxy instance)";
            return reply(client, msg, compressor, "getMore", start, ErrorReplies.error(ErrorReplies.CURSOR_NOT_FOUND,
                    "CursorNotFound", "cursor id " + proxyId + " not found" + why, List.of()));
        }
        CursorRoute route = found.get();
        TierBackend tier = server.tier(route.tier());
        CommandTraits traits = CommandTraits.of("getMore", msg.body());
        return getMoreRound(client, msg, compressor, start, route, tier, msg.requestId())
                .exceptionallyCompose(e -> {
                    cursors.remove(proxyId);
                    metrics.openCursors(cursors.size());
                    return unavailable(client, msg, compressor, "getMore", start, traits, e);
                });
    }

    /**
     * One getMore on the member. With {@code exhaustAllowed} the proxy streams: it keeps asking
     * the member for batches and sends each with moreToCome until the cursor is done, so the
     * pooled backend connection stays request/reply.
     */
    private CompletableFuture<Void> getMoreRound(ClientConnection client, OpMsg msg, Compressor compressor, long start,
                                                 CursorRoute route, TierBackend tier, int respondTo) {
        OpMsg request = toMember(tier, route.member(), msg, Map.of("getMore", new BsonInt64(route.backendId())));
        return roundTrip(tier, route.member(), request, client.channel().eventLoop()).thenCompose(reply -> server.tiered() == null
                ? CompletableFuture.completedFuture(reply.body())
                : server.tiered().filterBatch(route.proxyId(), reply.body())).thenCompose(body -> {
            ReplyFacts facts = observe(tier, route.member(), body);
            boolean ok = facts.ok();
            long backendId = ok ? facts.cursorId() : 0;
            RawBsonDocument out = body;
            if (backendId == 0) {
                cursors.remove(route.proxyId());
                metrics.openCursors(cursors.size());
            } else {
                out = facts.withCursorId(body, route.proxyId());
            }
            boolean stream = msg.exhaustAllowed() && backendId != 0 && client.isOpen();
            if (!stream) {
                return finish(client, msg, compressor, "getMore", start, out, ok, respondTo);
            }
            OpMsg part = new OpMsg(WireCodec.nextRequestId(), respondTo, OpMsg.MORE_TO_COME, out, List.of());
            return client.send(part, compressor)
                    .thenCompose(v -> getMoreRound(client, msg, compressor, start, route, tier, part.requestId()));
        });
    }

    private CompletableFuture<Void> killCursors(ClientConnection client, OpMsg msg, Compressor compressor, long start) {
        BsonDocument body = msg.body();
        BsonValue list = body.get("cursors");
        if (list == null || !list.isArray()) {
            return reply(client, msg, compressor, "killCursors", start, ErrorReplies.error(14, "TypeMismatch",
                    "killCursors needs a 'cursors' array of cursor ids", List.of()));
        }
        Map<ServerAddress, List<CursorRoute>> byMember = new LinkedHashMap<>();
        BsonArray notFound = new BsonArray();
        for (BsonValue v : list.asArray()) {
            long id = v.isNumber() ? v.asNumber().longValue() : 0;
            Optional<CursorRoute> route = cursors.remove(id);
            if (route.isPresent()) {
                byMember.computeIfAbsent(route.get().member(), m -> new ArrayList<>()).add(route.get());
            } else {
                notFound.add(new BsonInt64(id));
            }
        }
        metrics.openCursors(cursors.size());
        BsonArray killed = new BsonArray();
        BsonArray unknown = new BsonArray();
        List<CompletableFuture<Void>> calls = new ArrayList<>();
        for (Map.Entry<ServerAddress, List<CursorRoute>> e : byMember.entrySet()) {
            List<CursorRoute> routes = e.getValue();
            TierBackend tier = server.tier(routes.get(0).tier());
            BsonArray backendIds = new BsonArray();
            routes.forEach(r -> backendIds.add(new BsonInt64(r.backendId())));
            OpMsg request = toMember(tier, e.getKey(), msg, Map.of("cursors", backendIds));
            calls.add(roundTrip(tier, e.getKey(), request).handle((reply, error) -> {
                synchronized (killed) {
                    for (CursorRoute r : routes) {
                        if (error == null) {
                            observe(tier, e.getKey(), reply.body());
                            (contains(reply.body(), "cursorsNotFound", r.backendId()) ? notFound : killed).add(new BsonInt64(r.proxyId()));
                        } else {
                            unknown.add(new BsonInt64(r.proxyId()));
                        }
                    }
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            BsonDocument reply = new BsonDocument("cursorsKilled", killed).append("cursorsNotFound", notFound)
                    .append("cursorsAlive", new BsonArray()).append("cursorsUnknown", unknown)
                    .append("ok", new BsonDouble(1));
            return reply(client, msg, compressor, "killCursors", start, withClusterTime(reply));
        });
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

    private void endSessions(BsonDocument body) {
        BsonValue ended = body.get("endSessions");
        if (ended == null || !ended.isArray()) {
            return;
        }
        for (BsonValue lsid : ended.asArray()) {
            if (lsid.isDocument() && lsid.asDocument().get("id") != null) {
                SessionKey key = new SessionKey(lsid.asDocument().get("id"));
                sessions.ended(key);
                pins.release(key);
                killOnBackend(cursors.removeOwnedBy(new CursorOwner.Session(key)));
            }
        }
    }

    /** A client connection closed: kill the cursors nobody can continue any more. */
    void connectionClosed(ClientConnection client) {
        List<CursorRoute> orphans = new ArrayList<>(cursors.removeOwnedBy(new CursorOwner.Connection(client.id())));
        for (SessionKey abandoned : sessions.connectionClosed(client.id())) {
            pins.release(abandoned);
            orphans.addAll(cursors.removeOwnedBy(new CursorOwner.Session(abandoned)));
        }
        killOnBackend(orphans);
    }

    private void killOnBackend(List<CursorRoute> routes) {
        if (routes.isEmpty()) {
            return;
        }
        metrics.openCursors(cursors.size());
        for (CursorRoute r : routes) {
            TierBackend tier = server.tier(r.tier());
            BsonDocument cmd = new BsonDocument("killCursors", new BsonString(r.collection()))
                    .append("cursors", new BsonArray(List.of(new BsonInt64(r.backendId()))))
                    .append("$db", new BsonString(r.database()));
            if (r.lsid() != null) {
                cmd.append("lsid", r.lsid());
            }
            tier.clock().latest().ifPresent(ct -> cmd.append("$clusterTime", ct));
            roundTrip(tier, r.member(), OpMsg.request(BackendConnection.nextRequestId(), cmd)).whenComplete((reply, e) ->
                    LOG.info("event=orphan_cursor_killed tier={} member={} ns={} ok={}", r.tier().label(), r.member(),
                            r.namespace(), e == null && isOk(reply.body())));
        }
    }

    // ---- replies ---------------------------------------------------------------------------

    private CompletableFuture<Void> reply(ClientConnection client, OpMsg msg, Compressor compressor, String name, long start,
                                          BsonDocument body) {
        return finish(client, msg, compressor, name, start, OpMsg.raw(body), isOk(body), 0);
    }

    private CompletableFuture<Void> finish(ClientConnection client, OpMsg msg, Compressor compressor, String name, long start,
                                           RawBsonDocument body, boolean ok, int respondTo) {
        metrics.commandFinished(name, ok ? "ok" : "error", System.nanoTime() - start);
        if (msg.moreToCome()) {
            return CompletableFuture.completedFuture(null);
        }
        int responseTo = respondTo != 0 ? respondTo : msg.requestId();
        return client.send(new OpMsg(WireCodec.nextRequestId(), responseTo, 0, body, List.of()), compressor);
    }

    private CompletableFuture<Void> unavailable(ClientConnection client, OpMsg msg, Compressor compressor, String name,
                                                long start, CommandTraits traits, Throwable error) {
        Throwable cause = unwrap(error);
        if (!client.isOpen() || cause instanceof java.nio.channels.ClosedChannelException) {
            // The client went away while its request was in flight: nobody to answer.
            metrics.commandFinished(name, "client_gone", System.nanoTime() - start);
            return CompletableFuture.completedFuture(null);
        }
        BsonDocument reply;
        if (cause instanceof BackendUnavailableException b) {
            reply = ErrorReplies.backendUnavailable(b.getMessage(), traits, b.requestSent());
        } else if (cause instanceof PoolTimeoutException t) {
            reply = ErrorReplies.error(ErrorReplies.HOST_UNREACHABLE, "HostUnreachable", t.getMessage(),
                    traits.inTransaction() && !traits.endsTransaction() ? List.of("TransientTransactionError") : List.of());
        } else {
            LOG.warn("event=proxy_error command={} error=\"{}\"", name, cause.toString(), cause);
            reply = ErrorReplies.error(ErrorReplies.OPERATION_FAILED, "OperationFailed",
                    "the Thermocline proxy failed to forward " + name + ": " + cause, List.of());
        }
        metrics.commandFinished(name, "unavailable", System.nanoTime() - start);
        if (msg.moreToCome()) {
            return CompletableFuture.completedFuture(null);
        }
        return client.send(OpMsg.reply(msg.requestId(), reply), compressor);
    }

    static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }

    private static Throwable unwrap(Throwable e) {
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    private static String rootMessage(Throwable e) {
        return unwrap(e).getMessage();
    }

    /** Drops mappings of cursors idle past {@code idle} and kills them on their member in case they survive. */
    void sweepIdleCursors(java.time.Duration idle) {
        List<CursorRoute> idleCursors = cursors.removeIdle(idle.toNanos(), System.nanoTime());
        if (!idleCursors.isEmpty()) {
            LOG.info("event=idle_cursors_swept count={}", idleCursors.size());
            killOnBackend(idleCursors);
        }
    }

    int openSessions() {
        return sessions.size();
    }
}
