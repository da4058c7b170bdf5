package io.thermocline.proxy.gateway;

import com.mongodb.ServerAddress;
import io.netty.channel.EventLoop;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.causal.PassThroughCausalPoint;
import io.thermocline.proxy.command.CommandEnvelope;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.ReplyFacts;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.cursor.CursorOwner;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.pool.MemberPool;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.session.TransactionPins;
import io.thermocline.proxy.topology.InvalidReadPreference;
import io.thermocline.proxy.topology.MemberDescription;
import io.thermocline.proxy.topology.MemberRole;
import io.thermocline.proxy.topology.OutOfService;
import io.thermocline.proxy.topology.ReadPreference;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends a command to the member that must serve it and reads the reply once: chooses the member
 * ({@link MemberChoice}), translates what differs between a mongos and a replica-set member
 * (mongos-only fields, each tier's own cluster time), keeps transaction pins, learns from the reply
 * (cluster time, state-change errors) and swaps a cursor the reply opened for a proxy cursor.
 */
public final class Forwarder {
    private static final Logger LOG = LoggerFactory.getLogger(Forwarder.class);

    /** Fields a mongos accepts that must not reach a member as the client sent them. */
    private static final Set<String> MONGOS_ONLY = Set.of("$readPreference", "$clusterTime", "recoveryToken");

    private final Backends backends;
    private final TransactionPins pins;
    private final CursorRegistry cursors;
    private final ProxyMetrics metrics;
    private final AtomicInteger spread = new AtomicInteger();

    public Forwarder(Backends backends, TransactionPins pins, CursorRegistry cursors, ProxyMetrics metrics) {
        this.backends = backends;
        this.pins = pins;
        this.cursors = cursors;
        this.metrics = metrics;
    }

    public Backends backends() {
        return backends;
    }

    /**
     * One command of {@code request} (the client's own message, or one the tiered layer rewrote) on
     * {@code tier}: to the member it must reach, and back with the cursor it opened registered.
     */
    public CompletableFuture<TierReply> call(Request request, TierBackend tier, OpMsg msg) {
        return call(request, tier, msg, Map.of());
    }

    /** As {@link #call(Request, TierBackend, OpMsg)}, with {@code replace}d fields on the member's command. */
    public CompletableFuture<TierReply> call(
            Request request, TierBackend tier, OpMsg msg, Map<String, BsonValue> replace) {
        CommandTraits traits = request.traitsOf(msg);
        if (tier.tier() == Tier.ARCHIVE) {
            // a stalled archive answers hello, so no primary wait ends: only the serving probe knows (docs/faults.md)
            Optional<BackendUnavailableException> refused =
                    OutOfService.refusal(Tier.ARCHIVE, tier.outOfServiceFor(), traits.name(), tier.monitor());
            if (refused.isPresent()) {
                return CompletableFuture.failedFuture(refused.get());
            }
        }
        Optional<SessionKey> session = traits.session();
        BsonValue replacedConcern = replace.get("readConcern");
        BsonDocument concern = replacedConcern instanceof BsonDocument rc ? rc : traits.readConcern();
        BsonTimestamp point = PassThroughCausalPoint.afterClusterTime(concern);
        return chosen(tier, traits, Optional.empty(), point)
                .thenApply(choice -> countSecondaryRead(request, tier, traits, choice))
                .thenCompose(member -> roundTrip(
                                tier,
                                member,
                                toMember(tier, member, msg, replace),
                                request.client().eventLoop())
                        .thenApply(reply -> {
                            ReplyFacts facts = observe(tier, member, reply.body());
                            if (facts.ok() && point != null) {
                                learnApplied(tier, member, reply.body());
                            }
                            if (traits.endsTransaction()
                                    && session.isPresent()
                                    && (traits.name().equals("abortTransaction") || facts.ok())) {
                                pins.release(session.get());
                            }
                            return new TierReply(
                                    registerCursor(request, tier, member, reply.body(), facts, traits), facts.ok());
                        }));
    }

    /**
     * The client's {@code afterClusterTime} as this tier can honour it ({@link PassThroughCausalPoint}): a
     * point beyond the tier's clock as known is judged after reading the clock from its primary, so one
     * tier's cluster time never reaches the other. {@code readConcern}: the command's, as its traits read it.
     */
    public CompletableFuture<Map<String, BsonValue>> causalPointFor(TierBackend tier, BsonDocument readConcern) {
        if (!PassThroughCausalPoint.readConcernAheadOf(readConcern, tier.clock().latestTime())) {
            return CompletableFuture.completedFuture(Map.of());
        }
        BsonDocument ping = new BsonDocument("ping", new BsonInt32(1)).append("$db", new BsonString("admin"));
        tier.clock().latest().ifPresent(ct -> ping.append("$clusterTime", ct));
        return tier.monitor()
                .awaitPrimary(backends.primaryWait())
                .thenCompose(primary -> roundTrip(
                                tier, primary, OpMsg.request(BackendConnection.nextRequestId(), ping), null)
                        .thenApply(reply -> observe(tier, primary, reply.body())))
                .thenApply(facts -> PassThroughCausalPoint.replacingReadConcern(
                                readConcern, tier.clock().latestTime())
                        .<Map<String, BsonValue>>map(rc -> Map.of("readConcern", rc))
                        .orElse(Map.of()));
    }

    /** The member for a command with {@code traits} on {@code tier}, waiting for a primary where the choice needs one. */
    public CompletableFuture<ServerAddress> member(
            TierBackend tier, CommandTraits traits, Optional<ServerAddress> cursorMember) {
        return chosen(tier, traits, cursorMember, null).thenApply(MemberChoice.Member::address);
    }

    /**
     * As {@link #member}, for a command whose serving member must have applied {@code point} (a time of this tier's
     * clock, null: none): the decided member, waiting for a primary where the choice needs one.
     */
    private CompletableFuture<MemberChoice.Member> chosen(
            TierBackend tier, CommandTraits traits, Optional<ServerAddress> cursorMember, BsonTimestamp point) {
        Optional<SessionKey> session = traits.session();
        Optional<ServerAddress> pinned = traits.inTransaction() && session.isPresent()
                ? pins.find(session.get(), traits.txnNumber())
                        .filter(p -> p.tier() == tier.tier())
                        .map(TransactionPins.Pin::member)
                : Optional.empty();
        MemberChoice choice;
        try {
            choice = MemberChoice.choose(
                    pinned,
                    cursorMember,
                    traits,
                    tier.monitor().topology(),
                    point,
                    tier::inFlight,
                    spread.getAndIncrement());
        } catch (InvalidReadPreference e) {
            return CompletableFuture.failedFuture(e);
        }
        if (choice instanceof MemberChoice.Member m) {
            return CompletableFuture.completedFuture(m);
        }
        if (choice instanceof MemberChoice.Unsatisfiable u) {
            return unsatisfiable(tier, u, point);
        }
        CompletableFuture<ServerAddress> primary = tier.monitor().awaitPrimary(backends.primaryWait());
        if (choice instanceof MemberChoice.Primary p) {
            return primary.thenApply(member -> {
                if (p.pin()) {
                    pins.pin(session.get(), traits.txnNumber(), tier.tier(), member);
                }
                return p.at(member);
            });
        }
        MemberChoice.NoneEligible none = (MemberChoice.NoneEligible) choice;
        return primary.thenApply(
                p -> none.once(p, tier.monitor().topology(), point, tier::inFlight, spread.getAndIncrement()));
    }

    /**
     * A read whose mode never falls back to the primary and that no member fits: chosen again as the topology
     * changes (a stale secondary catching up, one coming back) until the server-selection timeout, then
     * {@code FailedToSatisfyReadPreference} as from a mongos; at once when the tier has no member that could fit.
     */
    private CompletableFuture<MemberChoice.Member> unsatisfiable(
            TierBackend tier, MemberChoice.Unsatisfiable none, BsonTimestamp point) {
        Duration wait = none.mayWait() ? backends.primaryWait() : Duration.ZERO;
        CompletableFuture<Optional<MemberChoice.Member>> found = none.mayWait()
                ? tier.monitor().awaitChoice(t -> none.again(t, point, tier::inFlight, spread.getAndIncrement()), wait)
                : CompletableFuture.completedFuture(Optional.empty());
        return found.thenApply(
                m -> m.orElseThrow(() -> none.failure(tier.monitor().topology(), wait)));
    }

    /**
     * Counts a read whose read preference let a secondary serve it, by the member that serves it and why secondaries
     * were allowed: the client's own read preference, or the collection's offloading (the tiered path's archive reads).
     */
    private ServerAddress countSecondaryRead(
            Request request, TierBackend tier, CommandTraits traits, MemberChoice.Member choice) {
        if (choice.why() != MemberChoice.Why.READ_PREFERENCE || !allowsSecondaries(traits.readPreference())) {
            return choice.address();
        }
        String reason = allowsSecondaries(request.msg().body().get("$readPreference")) ? "read_preference" : "offload";
        MemberDescription d = tier.monitor().topology().members().get(choice.address());
        boolean secondary = d != null && d.role() == MemberRole.SECONDARY;
        metrics.secondaryReadChoice(tier.tier(), secondary, reason, choice.laggingSkipped());
        return choice.address();
    }

    private static boolean allowsSecondaries(BsonValue readPreference) {
        try {
            return ReadPreference.parse(readPreference).mode().allowsSecondaries();
        } catch (InvalidReadPreference e) {
            return false;
        }
    }

    /** The client's command as a replica-set member must see it, with {@code replace}d fields. */
    public OpMsg toMember(TierBackend tier, ServerAddress member, OpMsg msg, Map<String, BsonValue> replace) {
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

    /**
     * One request/reply on a pooled connection to {@code member}, preferably one on {@code preferred}
     * (null: any). A lost primary fails the request once the election is visible, so the client's retry finds the new one.
     */
    public CompletableFuture<OpMsg> roundTrip(
            TierBackend tier, ServerAddress member, OpMsg request, EventLoop preferred) {
        MemberPool pool = tier.pool(member);
        return pool.borrow(preferred)
                .thenCompose(conn -> conn.roundTrip(request, null).handle((reply, error) -> {
                    if (error != null) {
                        pool.discard(conn);
                        tier.monitor().requestCheck();
                        throw new CompletionException(unwrap(error));
                    }
                    pool.release(conn);
                    return reply;
                }))
                .exceptionallyCompose(e -> {
                    Throwable cause = unwrap(e);
                    if (!(cause instanceof BackendUnavailableException)) {
                        return CompletableFuture.failedFuture(cause);
                    }
                    if (!member.equals(tier.monitor().topology().primary())) {
                        // a secondary that cannot be reached stops being chosen at once: the driver's retry goes
                        // elsewhere
                        tier.monitor().unreachable(member, cause.getMessage());
                        return CompletableFuture.failedFuture(cause);
                    }
                    return tier.monitor()
                            .awaitPrimaryOtherThan(member, backends.primaryWait())
                            .thenCompose(next -> CompletableFuture.<OpMsg>failedFuture(cause));
                });
    }

    /** Learns from every reply: the tier's cluster time, and whether the member stopped being primary. */
    public ReplyFacts observe(TierBackend tier, ServerAddress member, RawBsonDocument reply) {
        ReplyFacts facts = ReplyFacts.of(reply);
        if (facts.clusterTime() != null) {
            tier.clock().advance(facts.clusterTime());
        }
        if (!facts.ok() && MongoError.isStateChange(facts.code())) {
            LOG.info(
                    "event=member_state_change_error tier={} member={} code={}",
                    tier.tier().label(),
                    member,
                    facts.code());
            tier.monitor().requestCheck();
        }
        return facts;
    }

    /** A secondary's reply to a causal read: its operationTime is an optime the member has applied. */
    private static void learnApplied(TierBackend tier, ServerAddress member, RawBsonDocument reply) {
        MemberDescription d = tier.monitor().topology().members().get(member);
        if (d != null && d.role() == MemberRole.SECONDARY) {
            BsonValue time = reply.get("operationTime");
            if (time != null && time.isTimestamp()) {
                tier.monitor().appliedAtLeast(member, time.asTimestamp());
            }
        }
    }

    /** The reply with the cursor it opened (if any) replaced by a proxy cursor that remembers tier and member. */
    private RawBsonDocument registerCursor(
            Request request,
            TierBackend tier,
            ServerAddress member,
            RawBsonDocument reply,
            ReplyFacts facts,
            CommandTraits traits) {
        if (facts.cursorId() == 0) {
            return reply;
        }
        Optional<SessionKey> session = traits.session();
        CursorOwner owner = session.isPresent() && !request.client().loadBalanced()
                ? new CursorOwner.Session(session.get())
                : new CursorOwner.Connection(request.connectionId());
        String ns = facts.cursorNs() != null ? facts.cursorNs() : traits.database() == null ? "" : traits.database();
        BsonDocument shown =
                Objects.equals(traits.lsid(), request.traits().lsid()) ? request.clientLsid() : traits.lsid();
        long proxyId = cursors.register(
                        tier.tier(),
                        member,
                        facts.cursorId(),
                        ns,
                        traits.lsid(),
                        shown,
                        owner,
                        traits.noCursorTimeout(),
                        request.client().auth().userName(),
                        System.nanoTime())
                .proxyId();
        metrics.openCursors(cursors.size());
        return facts.withCursorId(reply, proxyId);
    }

    /**
     * Ends a proxy cursor nobody will continue (see {@link TierGateway#kill}): out of the table, killed on its member.
     * Completes with whether the member reported it among {@code cursorsKilled}.
     */
    public CompletableFuture<Boolean> kill(long proxyCursorId) {
        Optional<CursorRoute> route = cursors.remove(proxyCursorId);
        if (route.isEmpty()) {
            return CompletableFuture.completedFuture(false);
        }
        metrics.openCursors(cursors.size());
        long backendId = route.get().backendId();
        return killOnMember(route.get()).thenApply(reply -> {
            BsonValue killed = reply.body().get("cursorsKilled");
            return killed != null
                    && killed.isArray()
                    && killed.asArray().stream()
                            .anyMatch(id -> id.isNumber() && id.asNumber().longValue() == backendId);
        });
    }

    /** A {@code killCursors} of {@code route}'s cursor on its member (the route already out of the table). */
    public CompletableFuture<OpMsg> killOnMember(CursorRoute route) {
        TierBackend tier = backends.tier(route.tier());
        BsonDocument cmd = new BsonDocument("killCursors", new BsonString(route.collection()))
                .append("cursors", new BsonArray(List.of(new BsonInt64(route.backendId()))))
                .append("$db", new BsonString(route.database()));
        if (route.lsid() != null) {
            cmd.append("lsid", route.lsid());
        }
        tier.clock().latest().ifPresent(ct -> cmd.append("$clusterTime", ct));
        return roundTrip(tier, route.member(), OpMsg.request(BackendConnection.nextRequestId(), cmd), null);
    }

    /** The reply to a command the proxy answers itself, with the archive's latest cluster time as a mongos gossips it. */
    public BsonDocument withClusterTime(BsonDocument reply) {
        backends.archive().clock().latest().ifPresent(ct -> reply.append("$clusterTime", ct));
        return reply;
    }

    public static Throwable unwrap(Throwable e) {
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
