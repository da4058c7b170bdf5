package io.thermocline.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import java.util.Random;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.junit.jupiter.api.Test;

class WireFrameDecoderTest {

    private static byte[] ping(int requestId) {
        return WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(requestId, new BsonDocument("ping", new BsonInt32(1)))));
    }

    @Test
    void framesMessagesSplitAndCoalescedArbitrarily() {
        EmbeddedChannel channel = new EmbeddedChannel(new WireFrameDecoder());
        ByteBuf all = Unpooled.buffer();
        for (int i = 1; i <= 50; i++) {
            all.writeBytes(ping(i));
        }
        Random random = new Random(1);
        while (all.isReadable()) {
            int n = Math.min(all.readableBytes(), 1 + random.nextInt(40));
            channel.writeInbound(all.readRetainedSlice(n));
        }
        all.release();
        for (int i = 1; i <= 50; i++) {
            Inbound in = channel.readInbound();
            assertThat(in.message().requestId()).isEqualTo(i);
        }
        assertThat((Object) channel.readInbound()).isNull();
    }

    @Test
    void oversizedLengthIsRefusedAndTheRestIsDropped() {
        EmbeddedChannel channel = new EmbeddedChannel(new WireFrameDecoder(1_048_576));
        ByteBuf bad = Unpooled.buffer().writeIntLE(50_000_000).writeIntLE(77).writeIntLE(0).writeIntLE(OpCode.OP_MSG);
        assertThatThrownBy(() -> channel.writeInbound(bad))
                .isInstanceOf(DecoderException.class)
                .hasRootCauseInstanceOf(MalformedMessageException.class)
                .hasMessageContaining("outside 16..1048576");
        channel.writeInbound(Unpooled.wrappedBuffer(ping(5)));
        assertThat((Object) channel.readInbound()).as("a stream that lost framing stays dropped").isNull();
    }

    @Test
    void malformedFrameCarriesItsRequestId() {
        byte[] bytes = ping(99);
        bytes[bytes.length - 1] = 1; // the body no longer ends with a zero byte
        EmbeddedChannel channel = new EmbeddedChannel(new WireFrameDecoder());
        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(bytes)))
                .hasRootCauseInstanceOf(MalformedMessageException.class)
                .satisfies(e -> assertThat(((MalformedMessageException) e.getCause()).requestId()).isEqualTo(99));
    }

    @Test
    void encoderWritesWhatTheDecoderReads() {
        EmbeddedChannel out = new EmbeddedChannel(WireEncoder.INSTANCE);
        out.writeOutbound(new Outbound(OpMsg.request(12, new BsonDocument("hello", new BsonInt32(1))), Compressor.ZSTD));
        ByteBuf written = out.readOutbound();
        EmbeddedChannel in = new EmbeddedChannel(new WireFrameDecoder());
        in.writeInbound(written);
        Inbound got = in.readInbound();
        assertThat(got.compressedWith()).isEqualTo(Compressor.ZSTD);
        assertThat(((OpMsg) got.message()).commandName()).isEqualTo("hello");
    }

    @Test
    void randomMutationsNeverEscapeAsAnythingButMalformedMessage() {
        Random random = new Random(7);
        byte[] base = WireCodec.encodeToBytes(Outbound.plain(new OpMsg(1, 0, 0,
                org.bson.RawBsonDocument.parse("{insert: 'c', $db: 'd', x: {y: [1, 'two', {z: 3.5}]}}"),
                java.util.List.of(new DocumentSequence("documents", java.util.List.of(org.bson.RawBsonDocument.parse("{_id: 1}")))))));
        for (int i = 0; i < 20_000; i++) {
            byte[] m = base.clone();
            int flips = 1 + random.nextInt(4);
            for (int f = 0; f < flips; f++) {
                m[4 + random.nextInt(m.length - 4)] = (byte) random.nextInt(256);
            }
            try {
                WireCodec.decode(m, WireCodec.DEFAULT_MAX_MESSAGE_SIZE);
            } catch (MalformedMessageException expected) {
                assertThat(expected.getMessage()).isNotBlank();
            }
        }
    }
}
