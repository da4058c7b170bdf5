package io.thermocline.proxy.pool;

import com.mongodb.ServerAddress;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.topology.Tier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MemberPoolTest {
    private EventLoopGroup group;
    private MongoServer backend;
    private MemberPool pool;

    @BeforeEach
    void start() {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        backend = new MongoServer(new MemoryBackend());
        backend.bind("127.0.0.1", 0);
        BackendConnector connector = new BackendConnector(group, io.netty.channel.socket.nio.NioSocketChannel.class, 48_000_000, Duration.ofSeconds(2));
        // the pool wait bounds the timeout test and must outlast the other tests' waits on a loaded machine
        pool = new MemberPool(Tier.ARCHIVE, new ServerAddress("127.0.0.1", backend.getLocalAddress().getPort()), 2,
                Duration.ofSeconds(2), connector, group.next(), PoolListener.NONE);
    }

    @AfterEach
    void stop() {
        pool.close();
        backend.shutdownNow();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }

    @Test
    void neverOpensMoreThanItsSizeAndBoundsTheWait() throws Exception {
        BackendConnection a = pool.borrow().get(5, TimeUnit.SECONDS);
        BackendConnection b = pool.borrow().get(5, TimeUnit.SECONDS);
        assertThat(pool.open()).isEqualTo(2);
        CompletableFuture<BackendConnection> third = pool.borrow();
        assertThatThrownBy(() -> third.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(PoolTimeoutException.class).hasMessageContaining("stayed busy");
        CompletableFuture<BackendConnection> fourth = pool.borrow();
        pool.release(a);
        assertThat(fourth.get(5, TimeUnit.SECONDS)).isSameAs(a);
        pool.release(b);
        pool.release(fourth.get());
        assertThat(pool.open()).isEqualTo(2);
        assertThat(pool.idleConnections()).isEqualTo(2);
    }

    @Test
    void shrinkingClosesIdleConnectionsAtOnceAndBusyOnesWhenTheyComeBackAndGrowingServesWaiters() throws Exception {
        BackendConnection a = pool.borrow().get(5, TimeUnit.SECONDS);
        BackendConnection b = pool.borrow().get(5, TimeUnit.SECONDS);
        pool.release(b);
        pool.resize(0);
        assertThat(pool.open()).as("the idle one closed at once").isEqualTo(1);
        CompletableFuture<BackendConnection> waiting = pool.borrow();
        pool.release(a);
        assertThat(pool.open()).as("the busy one closed on release, not handed to the waiter").isZero();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !a.isOpen());
        assertThat(waiting).isNotDone();
        pool.resize(1);
        BackendConnection granted = waiting.get(5, TimeUnit.SECONDS);
        assertThat(pool.open()).isEqualTo(1);
        pool.release(granted);
    }

    @Test
    void aRequestGetsAConnectionOnItsOwnEventLoopWhileThePoolMayGrow() throws Exception {
        EventLoopGroup loops = new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
        try {
            io.netty.channel.EventLoop first = loops.next();
            io.netty.channel.EventLoop second = loops.next();
            assertThat(first).isNotSameAs(second);
            MemberPool affine = new MemberPool(Tier.ARCHIVE, new ServerAddress("127.0.0.1", backend.getLocalAddress().getPort()), 2,
                    Duration.ofMillis(300), new BackendConnector(loops, io.netty.channel.socket.nio.NioSocketChannel.class,
                    48_000_000, Duration.ofSeconds(2)), loops.next(), PoolListener.NONE);
            try {
                BackendConnection onFirst = affine.borrow(first).get(5, TimeUnit.SECONDS);
                affine.release(onFirst);
                BackendConnection onSecond = affine.borrow(second).get(5, TimeUnit.SECONDS);
                assertThat(onSecond.eventLoop()).isSameAs(second);
                assertThat(affine.open()).isEqualTo(2);
                affine.release(onSecond);
                // At its size the pool lends what is idle, whichever loop it lives on.
                BackendConnection a = affine.borrow(first).get(5, TimeUnit.SECONDS);
                BackendConnection b = affine.borrow(first).get(5, TimeUnit.SECONDS);
                assertThat(a).isSameAs(onFirst);
                assertThat(b).isSameAs(onSecond);
                assertThat(affine.open()).isEqualTo(2);
                assertThat(affine.inUse()).isEqualTo(2);
            } finally {
                affine.close();
            }
        } finally {
            loops.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void clearRetiresConnectionsAndAFailedConnectFailsFast() throws Exception {
        BackendConnection a = pool.borrow().get(5, TimeUnit.SECONDS);
        pool.clear();
        pool.release(a);
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !a.isOpen());
        assertThat(pool.open()).isZero();
        backend.shutdownNow();
        assertThatThrownBy(() -> pool.borrow().get(5, TimeUnit.SECONDS))
                .hasCauseInstanceOf(BackendUnavailableException.class).hasMessageContaining("cannot connect");
    }

    @Test
    void concurrentBorrowersAllGetAConnectionAndNoneLeaks() throws Exception {
        int threads = 8;
        int rounds = 400;
        pool.close();
        // A generous bound: a lost hand-off would still hang a borrower past it.
        pool = new MemberPool(Tier.ARCHIVE, new ServerAddress("127.0.0.1", backend.getLocalAddress().getPort()), 2,
                Duration.ofSeconds(10), new BackendConnector(group, io.netty.channel.socket.nio.NioSocketChannel.class,
                48_000_000, Duration.ofSeconds(2)), group.next(), PoolListener.NONE);
        java.util.List<Thread> workers = new java.util.ArrayList<>();
        java.util.List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                try {
                    for (int i = 0; i < rounds; i++) {
                        BackendConnection c = pool.borrow().get(30, TimeUnit.SECONDS);
                        pool.release(c);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            workers.add(th);
            th.start();
        }
        for (Thread th : workers) {
            th.join(60_000);
        }
        assertThat(failures).isEmpty();
        assertThat(pool.open()).isLessThanOrEqualTo(2);
        assertThat(pool.idleConnections()).isEqualTo(pool.open());
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(value = io.thermocline.wire.Compressor.class, names = {"ZSTD", "SNAPPY", "ZLIB"})
    void negotiatesCompressionWithTheMemberAndUsesIt(io.thermocline.wire.Compressor preferred) throws Exception {
        try (io.thermocline.embedded.EmbeddedReplicaSet rs = io.thermocline.embedded.EmbeddedReplicaSet.startSingle()) {
            var member = rs.primary();
            MemberPool compressed = new MemberPool(Tier.ARCHIVE, new ServerAddress(member.host()), 1,
                    Duration.ofSeconds(5), new BackendConnector(group, io.netty.channel.socket.nio.NioSocketChannel.class,
                    48_000_000, Duration.ofSeconds(2)), group.next(), PoolListener.NONE, java.util.List.of(preferred));
            try {
                BackendConnection c = compressed.borrow().get(10, TimeUnit.SECONDS);
                assertThat(c.compressor()).isEqualTo(preferred);
                var insert = io.thermocline.wire.OpMsg.request(BackendConnection.nextRequestId(), org.bson.BsonDocument.parse(
                        "{insert: 'z', documents: [{_id: 1, s: '" + "abc".repeat(2000) + "'}], $db: 'pool'}"));
                assertThat(c.roundTrip(insert, Duration.ofSeconds(10)).get(10, TimeUnit.SECONDS).body().getNumber("n").intValue()).isEqualTo(1);
                var find = io.thermocline.wire.OpMsg.request(BackendConnection.nextRequestId(), org.bson.BsonDocument.parse("{find: 'z', $db: 'pool'}"));
                assertThat(c.roundTrip(find, Duration.ofSeconds(10)).get(10, TimeUnit.SECONDS).body().getDocument("cursor")
                        .getArray("firstBatch")).hasSize(1);
                compressed.release(c);
            } finally {
                compressed.close();
            }
        }
    }
}
