package io.thermocline.proxy.server.handshake;

import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.command.Client;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.Backends;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.topology.WireLimits;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.bson.BsonDocument;

/**
 * hello and isMaster, which the proxy answers itself: over OP_QUERY (the legacy first message),
 * over OP_MSG, and awaitable (the streaming monitor protocol, exhaust included).
 */
public final class Hello {
    private final Handshake handshake;
    private final Backends backends;
    private final int maxMessageSizeBytes;
    private final BooleanSupplier draining;
    private final ProxyMetrics metrics;
    private final ProxySecurity security;
    /** Completes when the proxy starts draining: waiting awaitable hellos answer then, not at their maxAwaitTimeMS. */
    private final CompletableFuture<Void> quiesced = new CompletableFuture<>();
    /** The awaitable hellos waiting now, each its own answer (removed once it ran, so a long stream keeps none). */
    private final Map<Runnable, CompletableFuture<Void>> waiting = new ConcurrentHashMap<>();

    /** {@code security} adds what a driver's login needs to each reply (issue 15). */
    public Hello(
            Handshake handshake,
            Backends backends,
            int maxMessageSizeBytes,
            BooleanSupplier draining,
            ProxyMetrics metrics,
            ProxySecurity security) {
        this.handshake = handshake;
        this.backends = backends;
        this.maxMessageSizeBytes = maxMessageSizeBytes;
        this.draining = draining;
        this.metrics = metrics;
        this.security = security;
    }

    public static boolean isHello(String commandName) {
        return commandName.equals("hello") || commandName.equalsIgnoreCase("isMaster");
    }

    /** OP_QUERY is accepted for the handshake only, as a mongos (since 5.1) accepts it. */
    public CompletableFuture<Void> legacy(Client client, OpQuery query, Compressor compressor) {
        long start = System.nanoTime();
        BsonDocument q = query.query();
        if (q.containsKey("$query") && q.get("$query").isDocument()) {
            q = q.getDocument("$query");
        }
        String name = q.isEmpty() ? "" : q.getFirstKey();
        if (!query.isCommand() || !isHello(name)) {
            BsonDocument error = MongoError.UNSUPPORTED_OP_QUERY_COMMAND.reply("Unsupported OP_QUERY command: "
                    + (query.isCommand() ? name : "query on " + query.fullCollectionName())
                    + ". The client driver may require an upgrade; OP_QUERY is only accepted for the hello handshake");
            metrics.commandFinished("legacyQuery", "error", System.nanoTime() - start);
            return client.send(OpReply.reply(query.requestId(), error), compressor);
        }
        BsonDocument request = q;
        return document(client, name, request).thenCompose(reply -> {
            metrics.commandFinished(name, ok(reply) ? "ok" : "error", System.nanoTime() - start);
            return client.send(OpReply.reply(query.requestId(), reply), compressor);
        });
    }

    /** How many awaitable hellos (clients' streaming monitors) wait for a topology change now. */
    public int waiting() {
        return waiting.size();
    }

    /**
     * The proxy starts draining (mongos's quiesce mode): the topologyVersion changes, waiting awaitable
     * hellos answer at once, and every hello from now on is ShutdownInProgress (91), so drivers mark this
     * proxy unknown and route to the others of their list while requests in flight finish. Completes
     * when the waiting hellos have their answer.
     */
    public CompletableFuture<Void> quiesce() {
        handshake.quiesce();
        quiesced.complete(null);
        List<CompletableFuture<Void>> answers = new ArrayList<>();
        waiting.forEach((wake, answered) -> {
            answers.add(answered);
            wake.run();
        });
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new));
    }

    public CompletableFuture<Void> handle(Request request) {
        BsonDocument body = request.msg().body();
        if (quiesced.isDone()) {
            metrics.commandFinished(request.name(), "error", System.nanoTime() - request.startNanos());
            return request.client().send(OpMsg.reply(request.msg().requestId(), shuttingDown()), request.compressor());
        }
        if (handshake.isAwaitable(body) && handshake.isCurrent(body)) {
            long waitMs = Math.max(0, body.getNumber("maxAwaitTimeMS").longValue());
            return awaitable(
                    request, request.msg().requestId(), waitMs, request.msg().exhaustAllowed());
        }
        return document(request.client(), request.name(), body).thenCompose(reply -> {
            metrics.commandFinished(
                    request.name(), ok(reply) ? "ok" : "error", System.nanoTime() - request.startNanos());
            return request.client().send(OpMsg.reply(request.msg().requestId(), reply), request.compressor());
        });
    }

    /**
     * The proxy's topology changes only when it starts draining, so an awaitable hello is answered after
     * {@code maxAwaitTimeMS} or at that moment (with ShutdownInProgress); with exhaust the proxy keeps
     * answering (moreToCome) until the client hangs up or the proxy drains, each reply responding to the
     * previous one.
     */
    private CompletableFuture<Void> awaitable(Request request, int responseTo, long waitMs, boolean exhaust) {
        Client client = request.client();
        CompletableFuture<Void> done = new CompletableFuture<>();
        AtomicBoolean answered = new AtomicBoolean();
        AtomicReference<ScheduledFuture<?>> timer = new AtomicReference<>();
        Runnable[] wake = new Runnable[1];
        Runnable answer = () -> {
            if (!answered.compareAndSet(false, true)) {
                return;
            }
            waiting.remove(wake[0]);
            if (!client.isOpen()) {
                done.complete(null);
                return;
            }
            if (quiesced.isDone()) {
                client.send(OpMsg.reply(responseTo, shuttingDown()), request.compressor())
                        .whenComplete((v, e) -> done.complete(null));
                return;
            }
            document(client, request.name(), request.msg().body()).thenAccept(reply -> {
                OpMsg out = OpMsg.reply(responseTo, reply);
                boolean more = exhaust && !draining.getAsBoolean();
                if (more) {
                    out = out.withFlagBits(OpMsg.MORE_TO_COME);
                }
                OpMsg sent = out;
                client.send(sent, request.compressor()).whenComplete((v, e) -> {
                    if (e != null || !more) {
                        done.complete(null);
                    } else {
                        awaitable(request, sent.requestId(), waitMs, true)
                                .whenComplete((v2, e2) -> done.complete(null));
                    }
                });
            });
        };
        wake[0] = () -> {
            ScheduledFuture<?> t = timer.get();
            if (t != null) {
                t.cancel(false);
            }
            client.eventLoop().execute(answer);
        };
        waiting.put(wake[0], done);
        timer.set(client.eventLoop().schedule(answer, waitMs, TimeUnit.MILLISECONDS));
        if (quiesced.isDone()) {
            wake[0].run(); // quiesce() ran between the check in handle() and now
        }
        return done;
    }

    /** What mongos answers to hello in quiesce mode: the error, with the changed topologyVersion. */
    private BsonDocument shuttingDown() {
        BsonDocument reply = new BsonDocument();
        reply.putAll(MongoError.SHUTDOWN_IN_PROGRESS.reply(
                "the Thermocline proxy is shutting down; use another proxy replica"));
        return reply.append("topologyVersion", handshake.topologyVersion());
    }

    /**
     * The hello document for {@code client}; what the handshake agreed is recorded on the connection.
     * Security adds {@code saslSupportedMechs} and answers {@code speculativeAuthenticate} (issue 15).
     */
    private CompletableFuture<BsonDocument> document(Client client, String name, BsonDocument request) {
        List<Compressor> agreed = handshake.negotiate(request);
        boolean lb = Handshake.asksLoadBalanced(request);
        return backends.advertisedLimits()
                .handle((limits, error) -> {
                    if (error != null) {
                        return MongoError.HOST_UNREACHABLE.reply("the proxy cannot reach its backend yet: "
                                + Forwarder.unwrap(error).getMessage());
                    }
                    if (lb) {
                        client.loadBalancedAsked();
                    }
                    // Never invite a message larger than the proxy itself accepts.
                    WireLimits advertised = new WireLimits(
                            limits.minWireVersion(),
                            limits.maxWireVersion(),
                            limits.maxBsonObjectSize(),
                            Math.min(limits.maxMessageSizeBytes(), maxMessageSizeBytes),
                            limits.maxWriteBatchSize(),
                            limits.logicalSessionTimeoutMinutes());
                    return handshake.reply(
                            name,
                            request,
                            advertised,
                            client.id(),
                            agreed,
                            lb,
                            backends.archive().clock().latest().orElse(null));
                })
                .thenCompose(reply -> security.hello(client.auth(), request, reply));
    }

    private static boolean ok(BsonDocument reply) {
        return reply.getNumber("ok").intValue() == 1;
    }
}
