package io.thermocline.proxy;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.proxy.fleet.Fleet;
import io.thermocline.proxy.server.ProxyServer;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.Document;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThat;

/** The peer link's connections to each peer are bounded: forwarded cursor commands beyond the bound wait their turn. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FleetPeerLinksTest {
    private static final int DOCS = 25;
    private static final int BOUND = 2;
    private static final int CURSORS = 32;

    private MongoServer archive;
    private ProxyFleet fleet;

    @BeforeEach
    void start() {
        archive = new MongoServer(new MemoryBackend());
        archive.bind("127.0.0.1", 0);
        fleet = new ProxyFleet("mongodb://127.0.0.1:" + archive.getLocalAddress().getPort(), 64).peerConnections(BOUND);
        ProxyFleet.insertItems(ProxyFleet.uri(fleet.startReplica()), DOCS);
    }

    @AfterEach
    void stop() {
        fleet.close();
        archive.shutdownNow();
    }

    @Test
    void manyConcurrentForwardedGetMoresShareTheBoundedPeerConnectionsAndNoneIsLost() throws Exception {
        ProxyServer a = fleet.running().get(0);
        ProxyServer b = fleet.startReplica();
        fleet.awaitLive(2);
        List<Long> ids = new ArrayList<>();
        // the cursors belong to this connection: it stays open while B drains them
        try (WireClient onA = new WireClient(a.port())) {
            for (int i = 0; i < CURSORS; i++) {
                BsonDocument first = onA.command(BsonDocument.parse("{find: 'items', sort: {_id: 1}, batchSize: 1, $db: 'app'}")).body();
                assertThat(first.getDocument("cursor").getArray("firstBatch")).hasSize(1);
                ids.add(first.getDocument("cursor").getInt64("id").getValue());
            }
            drainConcurrently(a, b, ids);
        }
        assertThat(ProxyFleet.openCursors(a)).isZero();
    }

    private static void drainConcurrently(ProxyServer a, ProxyServer b, List<Long> ids) throws Exception {
        Fleet bFleet = b.fleet().orElseThrow();
        InetSocketAddress aPeer = new InetSocketAddress("127.0.0.1", a.fleet().orElseThrow().peerPort());
        AtomicInteger most = new AtomicInteger();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread sampler = new Thread(() -> {
            while (running.get()) {
                most.accumulateAndGet(bFleet.peerConnections(aPeer), Math::max);
                Thread.onSpinWait();
            }
        });
        sampler.start();
        ExecutorService clients = Executors.newFixedThreadPool(CURSORS);
        try {
            List<Future<List<Integer>>> drained = new ArrayList<>();
            for (long id : ids) {
                drained.add(clients.submit(() -> drainOn(b, id)));
            }
            for (Future<List<Integer>> f : drained) {
                assertThat(f.get(60, TimeUnit.SECONDS)).containsExactlyElementsOf(IntStream.range(1, DOCS).boxed().toList());
            }
        } finally {
            running.set(false);
            sampler.join();
            clients.shutdownNow();
        }
        assertThat(most.get()).as("peer connections B opened to A").isBetween(1, BOUND);
    }

    @Test
    void aGetMoreBeyondTheBoundWaitsThenFailsRetryablyAndItsCursorContinuesOnRetry() throws Exception {
        try (EmbeddedReplicaSet slowArchive = EmbeddedReplicaSet.startSingle();
             ProxyFleet one = new ProxyFleet(slowArchive.connectionString(), 12).peerConnections(1).poolWait(Duration.ofMillis(400))) {
            ProxyServer a = one.startReplica();
            ProxyServer b = one.startReplica();
            one.awaitLive(2);
            try (MongoClient direct = MongoClients.create(slowArchive.connectionString());
                 WireClient onA = new WireClient(a.port()); WireClient first = new WireClient(b.port());
                 WireClient second = new WireClient(b.port())) {
                ProxyFleet.insertItems(slowArchive.connectionString(), DOCS);
                long held = openCursor(onA);
                long waiting = openCursor(onA);
                // the archive holds the next getMore for 10 s (far past the wait below on a loaded machine): B's only peer connection to A stays busy that long
                direct.getDatabase("admin").runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: {times: 1},"
                        + " data: {failCommands: ['getMore'], blockConnection: true, blockTimeMS: 10000}}"));
                first.timeout(60_000);
                CompletableFuture<BsonDocument> slow = CompletableFuture.supplyAsync(() -> {
                    try {
                        return first.command(getMore(held)).body();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                // B opened its only peer connection to A for the held getMore (a sleep would race a loaded machine)
                InetSocketAddress aPeer = new InetSocketAddress("127.0.0.1", a.fleet().orElseThrow().peerPort());
                await().atMost(Duration.ofSeconds(60)).until(() -> b.fleet().orElseThrow().peerConnections(aPeer) == 1);
                BsonDocument refused = second.command(getMore(waiting)).body();
                assertThat(refused.getInt32("code").getValue()).as(refused.toJson()).isEqualTo(6);
                assertThat(refused.getString("errmsg").getValue()).contains("stayed busy", "fleet.peerConnections", "retry");
                assertThat(slow.get(30, TimeUnit.SECONDS).getDouble("ok").getValue()).isEqualTo(1.0);
                BsonDocument retried = second.command(getMore(waiting)).body();
                assertThat(retried.getDouble("ok").getValue()).as(retried.toJson()).isEqualTo(1.0);
                assertThat(retried.getDocument("cursor").getArray("nextBatch")).extracting(v -> v.asDocument().getInt32("_id").getValue())
                        .as("the refused getMore never reached the owner").containsExactly(1, 2);
                assertThat(b.fleet().orElseThrow().live()).as("heartbeats have links of their own").hasSize(2);
            }
        }
    }

    private static long openCursor(WireClient on) throws Exception {
        BsonDocument first = on.command(BsonDocument.parse("{find: 'items', sort: {_id: 1}, batchSize: 1, $db: 'app'}")).body();
        return first.getDocument("cursor").getInt64("id").getValue();
    }

    private static BsonDocument getMore(long id) {
        return BsonDocument.parse("{getMore: 1, collection: 'items', batchSize: 2, $db: 'app'}").append("getMore", new BsonInt64(id));
    }

    /** Every getMore of one cursor, on its own client connection to {@code via}; each reply must be ok. */
    private static List<Integer> drainOn(ProxyServer via, long id) throws Exception {
        List<Integer> seen = new ArrayList<>();
        try (WireClient client = new WireClient(via.port())) {
            while (id != 0) {
                BsonDocument next = client.command(getMore(id)).body();
                assertThat(next.getDouble("ok").getValue()).as(next.toJson()).isEqualTo(1.0);
                BsonArray batch = next.getDocument("cursor").getArray("nextBatch");
                for (BsonValue v : batch) {
                    seen.add(v.asDocument().getInt32("_id").getValue());
                }
                id = next.getDocument("cursor").getInt64("id").getValue();
            }
        }
        return seen;
    }
}
