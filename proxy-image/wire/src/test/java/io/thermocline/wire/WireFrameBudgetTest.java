package io.thermocline.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** {@link WireFrameDecoder} with a {@link MessageBudget}: what it reserves, when, and that every reservation is given back or handed on. */
class WireFrameBudgetTest {

    /** A budget that answers from a script and records every reservation and release. */
    private static final class ScriptedBudget implements MessageBudget {
        final Deque<Admission> answers = new ArrayDeque<>();
        final List<Long> reserved = new ArrayList<>();
        long held;

        @Override
        public Admission reserve(long bytes, long messageHolds) {
            reserved.add(bytes);
            Admission a = answers.isEmpty() ? Admission.ADMITTED : answers.poll();
            if (a instanceof Admission.Admitted) {
                held += bytes;
            }
            return a;
        }

        @Override
        public void release(long bytes) {
            held -= bytes;
        }
    }

    private static byte[] message(int requestId, int padding, Compressor compressor) {
        BsonDocument body =
                new BsonDocument("ping", new BsonInt32(1)).append("padding", new BsonString("0".repeat(padding)));
        return WireCodec.encodeToBytes(new Outbound(OpMsg.request(requestId, body), compressor));
    }

    private static EmbeddedChannel channel(ScriptedBudget budget) {
        return new EmbeddedChannel(new WireFrameDecoder(() -> WireCodec.DEFAULT_MAX_MESSAGE_SIZE, budget));
    }

    @Test
    void whatArrivesIsReservedAsItArrivesAndWhatItInflatesToOnceTheFrameIsWholeAndTheMessageCarriesIt() {
        ScriptedBudget budget = new ScriptedBudget();
        EmbeddedChannel channel = channel(budget);
        byte[] bomb = message(7, 100_000, Compressor.ZLIB);
        int inflated = message(7, 100_000, null).length - WireCodec.HEADER_LENGTH;
        for (int i = 0; i < bomb.length - 1; i++) {
            channel.writeInbound(Unpooled.wrappedBuffer(bomb, i, 1));
            assertThat(budget.held).as("held after %d bytes", i + 1).isEqualTo(i + 1 < 20 ? 0 : i + 1);
        }
        channel.writeInbound(Unpooled.wrappedBuffer(bomb, bomb.length - 1, 1));
        assertThat(budget.reserved.get(budget.reserved.size() - 1))
                .as("the inflated size, last")
                .isEqualTo(inflated);
        Inbound in = channel.readInbound();
        assertThat(in.compressedWith()).isEqualTo(Compressor.ZLIB);
        assertThat(in.heldBytes()).isEqualTo(budget.held).isEqualTo(bomb.length + inflated);
    }

    @Test
    void aFrameRefusedWhenWholeIsNotInflatedAndGivesBackWhatItHeld() {
        ScriptedBudget budget = new ScriptedBudget();
        budget.answers.add(MessageBudget.Admission.ADMITTED);
        budget.answers.add(new MessageBudget.Admission.Refused("inflates too far"));
        EmbeddedChannel channel = channel(budget);
        byte[] bomb = message(9, 1_000_000, Compressor.ZSTD);
        channel.writeInbound(Unpooled.wrappedBuffer(bomb));
        RefusedMessage refused = channel.readInbound();
        assertThat(refused.requestId()).isEqualTo(9);
        assertThat(refused.reason()).isEqualTo("inflates too far");
        assertThat(budget.held).isZero();
        channel.writeInbound(Unpooled.wrappedBuffer(message(10, 1, null)));
        assertThat(((Inbound) channel.readInbound()).message().requestId()).isEqualTo(10);
    }

    @Test
    void aRefusedFrameIsSkippedUnbufferedInItsTurnAndTheNextIsDecoded() {
        ScriptedBudget budget = new ScriptedBudget();
        budget.answers.add(new MessageBudget.Admission.Refused("too big"));
        EmbeddedChannel channel = channel(budget);
        byte[] big = message(1, 50_000, Compressor.ZSTD);
        byte[] next = message(2, 10, null);
        channel.writeInbound(Unpooled.wrappedBuffer(big, 0, 30));
        assertThat(budget.reserved).as("reserved what had arrived").containsExactly(30L);
        RefusedMessage refused = channel.readInbound();
        assertThat(refused.requestId()).isEqualTo(1);
        assertThat(refused.reason()).isEqualTo("too big");
        assertThat(refused.moreToCome()).isFalse();
        channel.writeInbound(Unpooled.wrappedBuffer(big, 30, big.length - 30), Unpooled.wrappedBuffer(next));
        Inbound in = channel.readInbound();
        assertThat(in.message().requestId()).isEqualTo(2);
        assertThat(budget.held).isEqualTo(next.length);
        assertThat((Object) channel.readInbound()).isNull();
    }

    @Test
    void aRefusedFireAndForgetMessageSaysSo() {
        ScriptedBudget budget = new ScriptedBudget();
        budget.answers.add(new MessageBudget.Admission.Refused("no room"));
        EmbeddedChannel channel = channel(budget);
        OpMsg w0 = new OpMsg(
                3, 0, OpMsg.MORE_TO_COME, OpMsg.raw(BsonDocument.parse("{insert: 'c', $db: 'd'}")), List.of());
        channel.writeInbound(Unpooled.wrappedBuffer(WireCodec.encodeToBytes(Outbound.plain(w0))));
        RefusedMessage refused = channel.readInbound();
        assertThat(refused.moreToCome()).isTrue();
    }

    @Test
    void aDeferredFrameStopsReadingUntilResumedThenAsksAgain() {
        ScriptedBudget budget = new ScriptedBudget();
        budget.answers.add(MessageBudget.Admission.DEFERRED);
        WireFrameDecoder decoder = new WireFrameDecoder(() -> WireCodec.DEFAULT_MAX_MESSAGE_SIZE, budget);
        EmbeddedChannel channel = new EmbeddedChannel(decoder);
        byte[] m = message(4, 1000, null);
        channel.writeInbound(Unpooled.wrappedBuffer(m));
        assertThat((Object) channel.readInbound()).isNull();
        assertThat(decoder.deferred()).isTrue();
        assertThat(channel.config().isAutoRead()).isFalse();
        decoder.resume();
        Inbound in = channel.readInbound();
        assertThat(in.message().requestId()).isEqualTo(4);
        assertThat(budget.reserved).containsExactly((long) m.length, (long) m.length);
        assertThat(decoder.deferred()).isFalse();
    }

    @Test
    void aMalformedFrameGivesItsReservationBack() {
        ScriptedBudget budget = new ScriptedBudget();
        EmbeddedChannel channel = channel(budget);
        byte[] bad = message(5, 100, null);
        bad[bad.length - 1] = 1;
        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(bad)))
                .hasRootCauseInstanceOf(MalformedMessageException.class);
        assertThat(budget.reserved).containsExactly((long) bad.length);
        assertThat(budget.held).isZero();
    }

    @Test
    void aFrameCutShortGivesItsReservationBackWithTheDecoder() {
        ScriptedBudget budget = new ScriptedBudget();
        EmbeddedChannel channel = channel(budget);
        byte[] m = message(6, 5000, null);
        channel.writeInbound(Unpooled.wrappedBuffer(m, 0, 100));
        assertThat(budget.held).isEqualTo(100);
        channel.close();
        assertThat(budget.held).isZero();
    }

    @Test
    void aDeclaredInflatedSizeOutOfRangeIsNotReservedButRefusedAsMalformed() {
        ScriptedBudget budget = new ScriptedBudget();
        EmbeddedChannel channel = channel(budget);
        byte[] lying = message(8, 10, Compressor.SNAPPY);
        java.nio.ByteBuffer.wrap(lying).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(20, Integer.MAX_VALUE);
        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(lying)))
                .hasRootCauseInstanceOf(MalformedMessageException.class)
                .hasMessageContaining("OP_COMPRESSED declares");
        assertThat(budget.reserved).containsExactly((long) lying.length);
        assertThat(budget.held).isZero();
    }
}
