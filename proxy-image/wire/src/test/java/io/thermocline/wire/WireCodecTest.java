package io.thermocline.wire;

import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WireCodecTest {

    private static final int MAX = WireCodec.DEFAULT_MAX_MESSAGE_SIZE;

    private static RawBsonDocument doc(String json) {
        return RawBsonDocument.parse(json);
    }

    private static OpMsg insertWithSequence(int flags) {
        return new OpMsg(42, 0, flags, doc("{insert: 'orders', $db: 'shop', ordered: true}"),
                List.of(new DocumentSequence("documents", List.of(doc("{_id: 1, a: 'x'}"), doc("{_id: 2, b: [1, {c: 2}]}")))));
    }

    @Test
    void opMsgWithDocumentSequenceRoundTrips() {
        OpMsg sent = insertWithSequence(0);
        Inbound in = WireCodec.decode(WireCodec.encodeToBytes(Outbound.plain(sent)), MAX);
        assertThat(in.compressedWith()).isNull();
        OpMsg got = (OpMsg) in.message();
        assertThat(got.requestId()).isEqualTo(42);
        assertThat(got.commandName()).isEqualTo("insert");
        assertThat(got.database()).isEqualTo("shop");
        assertThat(got.sequences()).hasSize(1);
        assertThat(got.command().getArray("documents")).hasSize(2);
        assertThat(got.command().getArray("documents").get(1).asDocument().getArray("b").get(1).asDocument().getInt32("c").getValue()).isEqualTo(2);
    }

    @Test
    void checksumIsWrittenAndVerified() {
        byte[] bytes = WireCodec.encodeToBytes(Outbound.plain(insertWithSequence(OpMsg.CHECKSUM_PRESENT)));
        assertThat(((OpMsg) WireCodec.decode(bytes, MAX).message()).checksumPresent()).isTrue();
        bytes[30] ^= 0x01;
        assertThatThrownBy(() -> WireCodec.decode(bytes, MAX))
                .isInstanceOf(MalformedMessageException.class)
                .hasMessageContaining("checksum");
    }

    @Test
    void moreToComeAndExhaustFlagsSurvive() {
        OpMsg sent = insertWithSequence(OpMsg.MORE_TO_COME | OpMsg.EXHAUST_ALLOWED);
        OpMsg got = (OpMsg) WireCodec.decode(WireCodec.encodeToBytes(Outbound.plain(sent)), MAX).message();
        assertThat(got.moreToCome()).isTrue();
        assertThat(got.exhaustAllowed()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(Compressor.class)
    void everyCompressorRoundTrips(Compressor compressor) {
        BsonDocument big = new BsonDocument("insert", new BsonString("c")).append("$db", new BsonString("d"))
                .append("pad", new BsonString("x".repeat(100_000)));
        OpMsg sent = OpMsg.request(7, big);
        byte[] bytes = WireCodec.encodeToBytes(new Outbound(sent, compressor));
        assertThat(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(12)).isEqualTo(OpCode.OP_COMPRESSED);
        if (compressor != Compressor.NOOP) {
            assertThat(bytes.length).isLessThan(50_000);
        }
        Inbound in = WireCodec.decode(bytes, MAX);
        assertThat(in.compressedWith()).isEqualTo(compressor);
        assertThat(((OpMsg) in.message()).body()).isEqualTo(big);
        assertThat(in.message().requestId()).isEqualTo(7);
    }

    @Test
    void compressionBombBeyondTheLimitIsRefused() {
        byte[] bytes = WireCodec.encodeToBytes(new Outbound(OpMsg.request(1, new BsonDocument("ping", new BsonInt32(1))), Compressor.ZLIB));
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(20, 1_000_000_000);
        assertThatThrownBy(() -> WireCodec.decode(bytes, MAX)).hasMessageContaining("uncompressed bytes; the limit");
    }

    @Test
    void wrongDeclaredUncompressedSizeIsRefused() {
        for (Compressor c : List.of(Compressor.SNAPPY, Compressor.ZLIB, Compressor.ZSTD)) {
            byte[] bytes = WireCodec.encodeToBytes(new Outbound(OpMsg.request(1, new BsonDocument("ping", new BsonInt32(1))), c));
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            b.putInt(20, b.getInt(20) + 3);
            assertThatThrownBy(() -> WireCodec.decode(bytes, MAX)).as(c.name()).isInstanceOf(MalformedMessageException.class);
        }
    }

    @Test
    void legacyQueryAndReplyRoundTrip() {
        OpQuery query = new OpQuery(9, 0, 0, "admin.$cmd", 0, -1, doc("{isMaster: 1, client: {driver: {name: 'x'}}}"), null);
        OpQuery got = (OpQuery) WireCodec.decode(WireCodec.encodeToBytes(Outbound.plain(query)), MAX).message();
        assertThat(got.isCommand()).isTrue();
        assertThat(got.database()).isEqualTo("admin");
        assertThat(got.query().getFirstKey()).isEqualTo("isMaster");

        OpReply reply = OpReply.reply(9, new BsonDocument("ok", new BsonInt32(1)));
        OpReply back = (OpReply) WireCodec.decode(WireCodec.encodeToBytes(Outbound.plain(reply)), MAX).message();
        assertThat(back.responseTo()).isEqualTo(9);
        assertThat(back.documents()).containsExactly(doc("{ok: 1}"));
    }

    @Test
    void unknownOpcodeIsNamed() {
        byte[] bytes = WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(3, new BsonDocument("ping", new BsonInt32(1)))));
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(12, 2001);
        assertThatThrownBy(() -> WireCodec.decode(bytes, MAX))
                .isInstanceOfSatisfying(MalformedMessageException.class, e -> assertThat(e.requestId()).isEqualTo(3))
                .hasMessageContaining("opcode 2001 is not supported");
    }

    @Test
    void unknownRequiredFlagBitIsRefused() {
        byte[] bytes = WireCodec.encodeToBytes(Outbound.plain(insertWithSequence(1 << 5)));
        assertThatThrownBy(() -> WireCodec.decode(bytes, MAX)).hasMessageContaining("unknown required flag bits");
    }

    @Test
    void documentWithLyingInnerLengthIsRefused() {
        byte[] bytes = WireCodec.encodeToBytes(Outbound.plain(insertWithSequence(0)));
        // the body document starts at 21; corrupt the type byte of its first element
        bytes[25] = 0x7f;
        assertThatThrownBy(() -> WireCodec.decode(bytes, MAX)).isInstanceOf(MalformedMessageException.class);
    }

    @Test
    void serverRepliesSkipTheElementWalkButNotTheLengthChecks() {
        byte[] bytes = WireCodec.encodeToBytes(Outbound.plain(insertWithSequence(0)));
        bytes[25] = 0x7f; // an unknown element type inside the body
        assertThat(WireCodec.decode(bytes, MAX, false).message().requestId()).isEqualTo(42);
        byte[] cut = WireCodec.encodeToBytes(Outbound.plain(insertWithSequence(0)));
        cut[cut.length - 1] = 1; // the last document no longer ends with a zero byte
        assertThatThrownBy(() -> WireCodec.decode(cut, MAX, false)).isInstanceOf(MalformedMessageException.class);
    }

    @Test
    void twoBodiesAreRefused() {
        byte[] one = WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(1, new BsonDocument("ping", new BsonInt32(1)))));
        int docLen = one.length - 21;
        byte[] two = new byte[one.length + 1 + docLen];
        System.arraycopy(one, 0, two, 0, one.length);
        two[one.length] = 0;
        System.arraycopy(one, 21, two, one.length + 1, docLen);
        ByteBuffer.wrap(two).order(ByteOrder.LITTLE_ENDIAN).putInt(0, two.length);
        assertThatThrownBy(() -> WireCodec.decode(two, MAX)).hasMessageContaining("more than one body");
    }

    @Test
    void lengthMismatchIsRefused() {
        byte[] bytes = WireCodec.encodeToBytes(Outbound.plain(OpMsg.request(1, new BsonDocument("ping", new BsonInt32(1)))));
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(0, bytes.length + 4);
        assertThatThrownBy(() -> WireCodec.decode(bytes, MAX)).hasMessageContaining("header says");
    }

    /** Header is 16 bytes, then original opcode (4), declared size (4) and compressor id (1): the payload follows. */
    @ParameterizedTest
    @EnumSource(value = Compressor.class, names = {"SNAPPY", "ZLIB", "ZSTD"})
    void anyCorruptionOfACompressedMessageIsAMalformedMessage(Compressor compressor) {
        byte[] message = WireCodec.encodeToBytes(new Outbound(OpMsg.request(3, BsonDocument.parse("{count: 'm', $db: 'fuzz'}")),
                compressor));
        int[] sizes = {0, 1, 17, 30, 31, 32, 64, 1_000, 100_000};
        for (int size : sizes) {
            byte[] lying = message.clone();
            ByteBuffer.wrap(lying).order(ByteOrder.LITTLE_ENDIAN).putInt(20, size);
            decodesOrIsMalformed(lying);
        }
        for (int at = 25; at < message.length; at++) {
            for (int flip : new int[]{0x01, 0x80, 0xff}) {
                byte[] corrupt = message.clone();
                corrupt[at] ^= (byte) flip;
                decodesOrIsMalformed(corrupt);
            }
        }
    }

    private static void decodesOrIsMalformed(byte[] message) {
        try {
            WireCodec.decode(message, WireCodec.DEFAULT_MAX_MESSAGE_SIZE);
        } catch (MalformedMessageException e) {
            assertThat(e.requestId()).isEqualTo(3);
        }
    }
}
