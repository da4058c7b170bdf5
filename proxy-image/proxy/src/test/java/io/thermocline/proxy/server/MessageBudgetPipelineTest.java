package io.thermocline.proxy.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.thermocline.proxy.ProxyFixture;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.WireCodec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What client messages hold of the proxy's budgets (issue 41 item 3), through its client pipeline on an
 * {@link EmbeddedChannel}: messages of 8 MB at most, 16 MB per connection, 24 MB in all. Requests are held by a gate
 * the test opens, so what is in flight, and when, is the test's choice.
 */
@Timeout(60)
class MessageBudgetPipelineTest {
    private static final int MB = 1_000_000;

    private static ProxyFixture fixture;

    @BeforeAll
    static void start() {
        fixture = ProxyFixture.start(
                "  maxMessageSizeBytes: 8000000\n  maxBufferedBytesPerConnection: 16000000\n"
                        + "  maxBufferedBytes: 24000000\n",
                Map.of());
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    /** Requests wait at the gate of their request id (open unless the test made one), then are answered ok. */
    private final Map<Integer, CompletableFuture<Void>> gates = new ConcurrentHashMap<>();

    private final List<Integer> handled = new ArrayList<>();

    private EmbeddedChannel connection() {
        ClientReplies replies = new ClientReplies(fixture.proxy().metrics());
        return new EmbeddedChannel(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                fixture.proxy().installClientPipeline(ch.pipeline(), request -> {
                    handled.add(request.msg().requestId());
                    CompletableFuture<Void> gate =
                            gates.getOrDefault(request.msg().requestId(), CompletableFuture.completedFuture(null));
                    return gate.thenCompose(v -> replies.reply(request, new BsonDocument("ok", new BsonInt32(1))));
                });
            }
        });
    }

    private static byte[] ping(int requestId, int padding, Compressor compressor) {
        BsonDocument body = new BsonDocument("ping", new BsonInt32(1))
                .append("padding", new BsonString("0".repeat(padding)))
                .append("$db", new BsonString("admin"));
        return WireCodec.encodeToBytes(new Outbound(OpMsg.request(requestId, body), compressor));
    }

    /** The replies written so far, as "responseTo ok" or "responseTo codeName". */
    private static List<String> replies(EmbeddedChannel channel) {
        channel.runPendingTasks();
        List<String> out = new ArrayList<>();
        for (Object o = channel.readOutbound(); o != null; o = channel.readOutbound()) {
            ByteBuf b = (ByteBuf) o;
            OpMsg reply = (OpMsg) WireCodec.decode(b, 64 * MB, false).message();
            b.release();
            BsonDocument body = reply.body();
            out.add(reply.responseTo() + " "
                    + (body.getNumber("ok").intValue() == 1
                            ? "ok"
                            : body.getString("codeName").getValue()));
        }
        return out;
    }

    private static long held() {
        return fixture.proxy().messageMemory().held();
    }

    @Test
    void pipelinedMessagesPastTheConnectionBudgetWaitForTheEarlierOnesInsteadOfBeingRefused() {
        gates.put(1, new CompletableFuture<>());
        EmbeddedChannel c = connection();
        byte[] all = new byte[0];
        for (int id = 1; id <= 3; id++) {
            byte[] m = ping(id, 6 * MB, null);
            byte[] both = java.util.Arrays.copyOf(all, all.length + m.length);
            System.arraycopy(m, 0, both, all.length, m.length);
            all = both;
        }
        c.writeInbound(Unpooled.wrappedBuffer(all));
        assertThat(handled).as("the first waits at its gate").containsExactly(1);
        assertThat(c.config().isAutoRead())
                .as("the third does not fit beside the first two: reading stops")
                .isFalse();
        assertThat(held()).isBetween(12L * MB, 13L * MB);
        gates.get(1).complete(null);
        assertThat(replies(c)).containsExactly("1 ok", "2 ok", "3 ok");
        assertThat(c.config().isAutoRead()).isTrue();
        assertThat(held()).as("everything answered gives everything back").isZero();
        c.finishAndReleaseAll();
    }

    @Test
    void aMessagePastTheProcessBudgetIsRefusedWith146InItsTurnAndTheConnectionKeepsWorking() {
        // three connections hold 7 MB each of frames not yet complete: 21 of the 24 MB
        List<EmbeddedChannel> holders = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            EmbeddedChannel h = connection();
            byte[] m = ping(100 + i, 8 * MB - 100, null);
            h.writeInbound(Unpooled.wrappedBuffer(m, 0, 7 * MB));
            holders.add(h);
        }
        assertThat(held()).isEqualTo(21L * MB);
        EmbeddedChannel c = connection();
        byte[] bomb = ping(7, 6 * MB, Compressor.ZLIB); // a few KB that would inflate to 6 MB
        assertThat(bomb.length).isLessThan(100_000);
        c.writeInbound(
                Unpooled.wrappedBuffer(ping(6, 10, null)),
                Unpooled.wrappedBuffer(bomb),
                Unpooled.wrappedBuffer(ping(8, 10, null)));
        assertThat(replies(c)).containsExactly("6 ok", "7 " + MongoError.EXCEEDED_MEMORY_LIMIT.codeName(), "8 ok");
        assertThat(c.isOpen()).isTrue();
        assertThat(fixture.proxy().messageMemory().refused()).isPositive();
        // one holder goes away mid-frame: its 7 MB come back, and the same message now fits
        holders.remove(0).close();
        assertThat(held()).isEqualTo(14L * MB);
        c.writeInbound(Unpooled.wrappedBuffer(ping(9, 6 * MB, Compressor.ZLIB)));
        assertThat(replies(c)).containsExactly("9 ok");
        holders.forEach(EmbeddedChannel::close);
        c.close();
        assertThat(held()).as("nothing left held once every connection closed").isZero();
    }

    @Test
    void aRequestThatFailsGivesBackWhatItHeldWithItsConnection() {
        EmbeddedChannel c = connection();
        gates.put(21, CompletableFuture.failedFuture(new IllegalStateException("the handler failed")));
        gates.put(22, new CompletableFuture<>());
        c.writeInbound(Unpooled.wrappedBuffer(ping(21, 3 * MB, null)));
        assertThat(c.isOpen()).as("a failed request closes its connection").isFalse();
        assertThat(held()).isZero();
        EmbeddedChannel d = connection();
        d.writeInbound(Unpooled.wrappedBuffer(ping(22, 3 * MB, Compressor.SNAPPY)));
        assertThat(held()).as("in flight: framed and inflated").isGreaterThan(3L * MB);
        d.close();
        gates.get(22).complete(null); // answered after the close: released once, at the close
        assertThat(held()).isZero();
    }
}
