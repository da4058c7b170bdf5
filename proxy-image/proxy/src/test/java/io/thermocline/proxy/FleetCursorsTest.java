package io.thermocline.proxy;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.wire.OpMsg;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cursors crossing proxy replicas of one fleet: a getMore or killCursors that reaches a replica other
 * than the one that opened the cursor is forwarded to the owner over the peer link.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FleetCursorsTest {
    private static final int DOCS = 25;

    private MongoServer archive;
    private ProxyFleet fleet;

    @BeforeEach
    void start() {
        archive = new MongoServer(new MemoryBackend());
        archive.bind("127.0.0.1", 0);
        InetSocketAddress a = archive.getLocalAddress();
        fleet = new ProxyFleet("mongodb://127.0.0.1:" + a.getPort(), 12);
        ProxyFleet.insertItems(ProxyFleet.uri(fleet.startReplica()), DOCS);
    }

    @AfterEach
    void stop() {
        fleet.close();
        archive.shutdownNow();
    }

    @Test
    void getMoreOnEveryOtherReplicaContinuesTheCursorOpenedOnTheFirst() throws Exception {
        ProxyServer a = fleet.running().get(0);
        ProxyServer b = fleet.startReplica();
        ProxyServer c = fleet.startReplica();
        awaitLive(3);
        List<Integer> seen = new ArrayList<>();
        try (WireClient onA = new WireClient(a.port()); WireClient onB = new WireClient(b.port());
             WireClient onC = new WireClient(c.port())) {
            BsonDocument first = onA.command(BsonDocument.parse("{find: 'items', sort: {_id: 1}, batchSize: 5, $db: 'app'}")).body();
            long id = first.getDocument("cursor").getInt64("id").getValue();
            collect(first.getDocument("cursor").getArray("firstBatch"), seen);
            for (int round = 0; id != 0; round++) {
                WireClient via = round % 2 == 0 ? onB : onC;
                BsonDocument next = via.command(getMore(id, 5)).body();
                assertThat(next.getDouble("ok").getValue()).as(next.toJson()).isEqualTo(1.0);
                collect(next.getDocument("cursor").getArray("nextBatch"), seen);
                id = next.getDocument("cursor").getInt64("id").getValue();
            }
        }
        assertThat(seen).containsExactlyElementsOf(IntStream.range(0, DOCS).boxed().toList());
        assertThat(ProxyFleet.openCursors(a)).isZero();
    }

    @Test
    void killCursorsOnAnotherReplicaKillsTheOwnersCursor() throws Exception {
        ProxyServer a = fleet.running().get(0);
        ProxyServer b = fleet.startReplica();
        awaitLive(2);
        try (WireClient onA = new WireClient(a.port()); WireClient onB = new WireClient(b.port())) {
            long id = onA.command(BsonDocument.parse("{find: 'items', batchSize: 2, $db: 'app'}")).body()
                    .getDocument("cursor").getInt64("id").getValue();
            assertThat(ProxyFleet.openCursors(a)).isEqualTo(1);
            BsonDocument killed = onB.command(new BsonDocument("killCursors", new org.bson.BsonString("items"))
                    .append("cursors", new BsonArray(List.of(new BsonInt64(id)))).append("$db", new org.bson.BsonString("app"))).body();
            assertThat(killed.getArray("cursorsKilled")).as(killed.toJson()).containsExactly(new BsonInt64(id));
            assertThat(ProxyFleet.openCursors(a)).isZero();
            BsonDocument after = onB.command(getMore(id, 2)).body();
            assertThat(after.getInt32("code").getValue()).isEqualTo(43);
        }
    }

    @Test
    void exhaustGetMoreStreamsAcrossTheForward() throws Exception {
        ProxyServer a = fleet.running().get(0);
        ProxyServer b = fleet.startReplica();
        awaitLive(2);
        List<Integer> seen = new ArrayList<>();
        try (WireClient onA = new WireClient(a.port()); WireClient onB = new WireClient(b.port())) {
            BsonDocument first = onA.command(BsonDocument.parse("{find: 'items', sort: {_id: 1}, batchSize: 3, $db: 'app'}")).body();
            collect(first.getDocument("cursor").getArray("firstBatch"), seen);
            long id = first.getDocument("cursor").getInt64("id").getValue();
            int requestId = onB.nextRequestId();
            onB.send(new OpMsg(requestId, 0, OpMsg.EXHAUST_ALLOWED, OpMsg.raw(getMore(id, 3)), List.of()), null);
            int replies = 0;
            int respondsTo = requestId;
            while (true) {
                OpMsg part = (OpMsg) onB.receive().message();
                replies++;
                assertThat(part.responseTo()).isEqualTo(respondsTo);
                BsonDocument cursor = part.body().getDocument("cursor");
                collect(cursor.getArray("nextBatch"), seen);
                if (!part.moreToCome()) {
                    assertThat(cursor.getInt64("id").getValue()).isZero();
                    break;
                }
                respondsTo = part.requestId();
            }
            assertThat(replies).isGreaterThan(1);
        }
        assertThat(seen).containsExactlyElementsOf(IntStream.range(0, DOCS).boxed().toList());
    }

    @Test
    void getMoreForAReplicaThatDiedAnswersCursorNotFoundSayingWhy() throws Exception {
        ProxyServer a = fleet.running().get(0);
        ProxyServer b = fleet.startReplica();
        awaitLive(2);
        long id;
        try (WireClient onA = new WireClient(a.port())) {
            id = onA.command(BsonDocument.parse("{find: 'items', batchSize: 2, $db: 'app'}")).body()
                    .getDocument("cursor").getInt64("id").getValue();
        }
        fleet.stop(a);
        try (WireClient onB = new WireClient(b.port())) {
            BsonDocument reply = onB.command(getMore(id, 2)).body();
            assertThat(reply.getInt32("code").getValue()).isEqualTo(43);
            assertThat(reply.getString("errmsg").getValue()).containsAnyOf("not among the live replicas", "stopped answering");
            // The surviving replica keeps serving its own cursors.
            BsonDocument own = onB.command(BsonDocument.parse("{find: 'items', batchSize: 2, $db: 'app'}")).body();
            long ownId = own.getDocument("cursor").getInt64("id").getValue();
            assertThat(onB.command(getMore(ownId, 2)).body().getDouble("ok").getValue()).isEqualTo(1.0);
        }
    }

    @Test
    void aReplicaWithoutTheClusterSecretIsNoPeer() throws Exception {
        ProxyServer a = fleet.running().get(0);
        ProxyServer stranger = fleet.startReplica(ProxyFleet.secretFile("some-other-cluster-secret-9876543210"));
        Thread.sleep(1_000);
        assertThat(stranger.fleet().orElseThrow().live()).hasSize(1);
        assertThat(a.fleet().orElseThrow().live()).hasSize(1);
        try (WireClient onA = new WireClient(a.port()); WireClient onStranger = new WireClient(stranger.port())) {
            long id = onA.command(BsonDocument.parse("{find: 'items', batchSize: 2, $db: 'app'}")).body()
                    .getDocument("cursor").getInt64("id").getValue();
            BsonDocument reply = onStranger.command(getMore(id, 2)).body();
            assertThat(reply.getInt32("code").getValue()).isEqualTo(43);
        }
        // The peer port answers nothing but the handshake.
        try (WireClient raw = new WireClient(a.fleet().orElseThrow().peerPort())) {
            BsonDocument reply = raw.command(BsonDocument.parse("{find: 'items', $db: 'app'}")).body();
            assertThat(reply.getInt32("code").getValue()).isEqualTo(18);
            assertThat(raw.closedByPeer()).isTrue();
        }
    }

    private void awaitLive(int n) {
        fleet.awaitLive(n);
    }

    private static BsonDocument getMore(long id, int batch) {
        return BsonDocument.parse("{getMore: " + id + ", collection: 'items', batchSize: " + batch + ", $db: 'app'}")
                .append("getMore", new BsonInt64(id));
    }

    private static void collect(BsonArray batch, List<Integer> into) {
        for (BsonValue v : batch) {
            into.add(v.asDocument().getInt32("_id").getValue());
        }
    }
}
