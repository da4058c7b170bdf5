package io.thermocline.proxy.tiered.transactions;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.routing.CommandClassifier;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.tiered.exchange.Exchange;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.TieringFollower;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.state.TieringState;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The per-session transaction pins of the tiered path: a commit goes to the fast tier only while its pin is remembered. */
@Timeout(10)
class TransactionRoutingTest {

    private static final CollectionPolicy ORDERS =
            new CollectionPolicy("shop", "orders", "createdAt", Duration.ofDays(30));
    private static final RoutingTable TABLE = RoutingTable.of(
            List.of(ORDERS),
            TieringState.initial()
                    .withCoverage(ORDERS.namespace(), CoverageBound.from(Instant.parse("2026-03-01T00:00:00Z"))));
    private static final RawBsonDocument OK = OpMsg.raw(BsonDocument.parse("{ok: 1}"));

    private final AtomicLong nanos = new AtomicLong();
    private final AtomicLong submitted = new AtomicLong();
    private final TransactionRouting routing = new TransactionRouting(
            (x, ns, cls, cold) -> OK,
            null,
            new RoutingMetrics(new PrometheusRegistry()),
            2,
            SessionKey.TIMEOUT,
            nanos::get);

    @Test
    void aCommitFollowsItsTransactionToTheFastTier() {
        assertThat(insertStarting(1)).as("claimed for the fast tier").isPresent();
        assertThat(commit(1)).as("the commit goes where the transaction ran").isPresent();
        assertThat(submitted).hasValue(2);
    }

    @Test
    void aTransactionNoStatementUsedForTheSessionTimeoutIsForgottenAndAUsedOneKept() {
        insertStarting(1);
        insertStarting(2);
        nanos.addAndGet(Duration.ofMinutes(20).toNanos());
        assertThat(insertContinuing(1)).isPresent();
        nanos.addAndGet(Duration.ofMinutes(20).toNanos());
        assertThat(commit(2))
                .as("idle 40 minutes: the pin is gone, the commit passes through")
                .isEmpty();
        assertThat(commit(1)).as("used 20 minutes ago").isPresent();
    }

    @Test
    void aLaterStatementOnAReplicaThatDidNotStartTheTransactionGetsNoSuchTransaction() throws Exception {
        assertThat(insertStarting(1)).isPresent();
        TransactionRouting elsewhere = new TransactionRouting(
                (x, ns, cls, cold) -> OK,
                null,
                new RoutingMetrics(new PrometheusRegistry()),
                2,
                SessionKey.TIMEOUT,
                nanos::get);
        long before = submitted.get();
        Optional<CompletableFuture<RawBsonDocument>> there = route(
                elsewhere,
                1,
                "{insert: 'orders', documents: [{createdAt:"
                        + " {$date: '2026-03-15T00:00:00Z'}}], $db: 'shop', autocommit: false}");
        assertThat(there).as("refused, not started anew on the fast tier").isPresent();
        RawBsonDocument reply = there.get().get();
        assertThat(reply.getInt32("code").getValue()).isEqualTo(251);
        assertThat(reply.getArray("errorLabels").get(0).asString().getValue()).isEqualTo("TransientTransactionError");
        assertThat(submitted.get()).isEqualTo(before);
        assertThat(insertContinuing(1))
                .as("the replica that started it goes on")
                .isPresent();
    }

    @Test
    void pinsAreBounded() {
        insertStarting(1);
        insertStarting(2);
        insertStarting(3);
        assertThat(commit(1)).as("least recently used of three, capacity two").isEmpty();
        assertThat(commit(3)).isPresent();
    }

    private Optional<CompletableFuture<RawBsonDocument>> insertStarting(int session) {
        return route(
                session,
                "{insert: 'orders', documents: [{createdAt: {$date: '2026-03-15T00:00:00Z'}}], $db: 'shop',"
                        + " startTransaction: true, autocommit: false}");
    }

    private Optional<CompletableFuture<RawBsonDocument>> insertContinuing(int session) {
        return route(
                session,
                "{insert: 'orders', documents: [{createdAt: {$date: '2026-03-15T00:00:00Z'}}], $db: 'shop',"
                        + " autocommit: false}");
    }

    private Optional<CompletableFuture<RawBsonDocument>> commit(int session) {
        return route(session, "{commitTransaction: 1, $db: 'admin', autocommit: false}");
    }

    private Optional<CompletableFuture<RawBsonDocument>> route(int session, String json) {
        return route(routing, session, json);
    }

    private Optional<CompletableFuture<RawBsonDocument>> route(TransactionRouting routing, int session, String json) {
        BsonDocument command = BsonDocument.parse(json)
                .append("lsid", BsonDocument.parse("{id: " + session + "}"))
                .append("txnNumber", new BsonInt64(1));
        Request request = Request.of(null, OpMsg.request(1, command), null);
        Exchange x = new Exchange(
                request,
                command,
                request.traits(),
                request.traits().session(),
                new TieringFollower.Decided(TABLE, 1, 0));
        return routing.route(x, CommandClassifier.classify(command, request.database(), TABLE), (exchange, work) -> {
            submitted.incrementAndGet();
            return CompletableFuture.completedFuture(OK);
        });
    }
}
