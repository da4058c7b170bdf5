package io.thermocline.proxy;

import io.thermocline.wire.Compressor;
import io.thermocline.wire.Inbound;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.OpQuery;
import io.thermocline.wire.OpReply;
import io.thermocline.wire.WireCodec;
import io.thermocline.wire.Outbound;
import io.thermocline.wire.DocumentSequence;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The wire protocol as the proxy speaks it, checked message by message. */
class WireProtocolTest {
    private static ProxyFixture fixture;

    @BeforeAll
    static void start() {
        fixture = ProxyFixture.start();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static BsonDocument cmd(String json) {
        return BsonDocument.parse(json);
    }

    @Test
    void legacyOpQueryHandshakeGetsAnOpReplyAsMongos() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            c.send(new OpQuery(7, 0, 0, "admin.$cmd", 0, -1,
                    OpMsg.raw(cmd("{isMaster: 1, helloOk: true, client: {driver: {name: 'legacy', version: '1'}}}")), null), null);
            Inbound in = c.receive();
            assertThat(in.message()).isInstanceOf(OpReply.class);
            OpReply reply = (OpReply) in.message();
            assertThat(reply.responseTo()).isEqualTo(7);
            RawBsonDocument doc = reply.documents().get(0);
            assertThat(doc.getBoolean("ismaster").getValue()).isTrue();
            assertThat(doc.getString("msg").getValue()).isEqualTo("isdbgrid");
            assertThat(doc.getBoolean("helloOk").getValue()).isTrue();
            assertThat(doc.getNumber("maxWireVersion").intValue()).isEqualTo(8);
        }
    }

    @Test
    void legacyOpQueryForOtherCommandsIsRefusedClearly() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            c.send(new OpQuery(8, 0, 0, "app.$cmd", 0, -1, OpMsg.raw(cmd("{find: 'x'}")), null), null);
            OpReply reply = (OpReply) c.receive().message();
            assertThat(reply.documents().get(0).getNumber("code").intValue()).isEqualTo(352);
            assertThat(reply.documents().get(0).getString("errmsg").getValue()).contains("find");
        }
    }

    @Test
    void helloNegotiatesCompressionInTheClientsOrder() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            OpMsg reply = c.command(cmd("{hello: 1, compression: ['lz4', 'zlib', 'zstd', 'snappy'], $db: 'admin'}"));
            assertThat(reply.body().getArray("compression")).containsExactly(
                    new BsonString("zlib"), new BsonString("zstd"), new BsonString("snappy"));
            assertThat(reply.body().getBoolean("isWritablePrimary").getValue()).isTrue();
            assertThat(reply.body().containsKey("serviceId")).isFalse();
        }
    }

    @ParameterizedTest
    @EnumSource(value = Compressor.class, names = {"SNAPPY", "ZLIB", "ZSTD"})
    void compressedRequestsGetRepliesWithTheSameCompressor(Compressor compressor) throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            c.command(cmd("{hello: 1, compression: ['" + compressor.wireName() + "'], $db: 'admin'}"));
            String coll = "compressed_" + compressor.wireName();
            c.send(OpMsg.request(c.nextRequestId(), cmd("{insert: '" + coll + "', documents: [{_id: 1, s: '" + "z".repeat(5000) + "'}], $db: 'wire'}")), compressor);
            Inbound inserted = c.receive();
            assertThat(inserted.compressedWith()).isEqualTo(compressor);
            assertThat(((OpMsg) inserted.message()).body().getNumber("n").intValue()).isEqualTo(1);
            c.send(OpMsg.request(c.nextRequestId(), cmd("{find: '" + coll + "', $db: 'wire'}")), compressor);
            Inbound found = c.receive();
            assertThat(found.compressedWith()).isEqualTo(compressor);
            assertThat(((OpMsg) found.message()).body().getDocument("cursor").getArray("firstBatch")).hasSize(1);
        }
    }

    @Test
    void checksummedRequestsAreVerifiedAndAnswered() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            OpMsg request = new OpMsg(41, 0, OpMsg.CHECKSUM_PRESENT, OpMsg.raw(cmd("{ping: 1, $db: 'admin'}")), List.of());
            c.send(request, null);
            OpMsg reply = (OpMsg) c.receive().message();
            assertThat(reply.responseTo()).isEqualTo(41);
            assertThat(reply.body().getNumber("ok").intValue()).isEqualTo(1);
        }
        try (WireClient c = new WireClient(fixture.port())) {
            byte[] bytes = WireCodec.encodeToBytes(Outbound.plain(
                    new OpMsg(42, 0, OpMsg.CHECKSUM_PRESENT, OpMsg.raw(cmd("{ping: 1, $db: 'admin'}")), List.of())));
            bytes[bytes.length - 1] ^= 0x5A;
            c.sendRaw(bytes);
            OpMsg reply = (OpMsg) c.receive().message();
            assertThat(reply.body().getNumber("code").intValue()).isEqualTo(17);
            assertThat(c.closedByPeer()).isTrue();
        }
    }

    @Test
    void documentSequencesAndMoreToComeWritesAreApplied() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            List<RawBsonDocument> docs = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                docs.add(OpMsg.raw(new BsonDocument("_id", new BsonInt32(i))));
            }
            OpMsg fireAndForget = new OpMsg(c.nextRequestId(), 0, OpMsg.MORE_TO_COME,
                    OpMsg.raw(cmd("{insert: 'seq', writeConcern: {w: 0}, $db: 'wire'}")),
                    List.of(new DocumentSequence("documents", docs)));
            c.send(fireAndForget, null);
            OpMsg count = c.command(cmd("{count: 'seq', $db: 'wire'}"));
            assertThat(count.body().getNumber("n").intValue()).isEqualTo(5);
        }
    }

    @Test
    void exhaustGetMoreStreamsEveryBatchWithMoreToCome() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            BsonArray docs = new BsonArray();
            for (int i = 0; i < 53; i++) {
                docs.add(new BsonDocument("_id", new BsonInt32(i)));
            }
            c.command(new BsonDocument("insert", new BsonString("exhaust")).append("documents", docs).append("$db", new BsonString("wire")));
            OpMsg first = c.command(cmd("{find: 'exhaust', batchSize: 5, $db: 'wire'}"));
            long id = first.body().getDocument("cursor").getInt64("id").getValue();
            int requestId = c.nextRequestId();
            c.send(new OpMsg(requestId, 0, OpMsg.EXHAUST_ALLOWED, OpMsg.raw(new BsonDocument("getMore", new BsonInt64(id))
                    .append("collection", new BsonString("exhaust")).append("batchSize", new BsonInt32(5))
                    .append("$db", new BsonString("wire"))), List.of()), null);
            int received = first.body().getDocument("cursor").getArray("firstBatch").size();
            int expectResponseTo = requestId;
            int replies = 0;
            while (true) {
                OpMsg part = (OpMsg) c.receive().message();
                replies++;
                assertThat(part.responseTo()).isEqualTo(expectResponseTo);
                received += part.body().getDocument("cursor").getArray("nextBatch").size();
                expectResponseTo = part.requestId();
                if (!part.moreToCome()) {
                    assertThat(part.body().getDocument("cursor").getInt64("id").getValue()).isZero();
                    break;
                }
                assertThat(part.body().getDocument("cursor").getInt64("id").getValue()).isEqualTo(id);
            }
            assertThat(received).isEqualTo(53);
            assertThat(replies).isGreaterThanOrEqualTo(10);
        }
    }

    @Test
    void awaitableHelloStreamsWithExhaust() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            OpMsg hello = c.command(cmd("{hello: 1, $db: 'admin'}"));
            BsonDocument tv = hello.body().getDocument("topologyVersion");
            int requestId = c.nextRequestId();
            c.send(new OpMsg(requestId, 0, OpMsg.EXHAUST_ALLOWED, OpMsg.raw(new BsonDocument("hello", new BsonInt32(1))
                    .append("topologyVersion", tv).append("maxAwaitTimeMS", new BsonInt32(50))
                    .append("$db", new BsonString("admin"))), List.of()), null);
            OpMsg one = (OpMsg) c.receive().message();
            OpMsg two = (OpMsg) c.receive().message();
            assertThat(one.moreToCome()).isTrue();
            assertThat(one.responseTo()).isEqualTo(requestId);
            assertThat(two.moreToCome()).isTrue();
            assertThat(two.responseTo()).isEqualTo(one.requestId());
            assertThat(two.body().getDocument("topologyVersion")).isEqualTo(tv);
        }
    }

    @Test
    void loadBalancedClientsGetAServiceId() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            OpMsg reply = c.command(cmd("{hello: 1, loadBalanced: true, $db: 'admin'}"));
            assertThat(reply.body().isObjectId("serviceId")).isTrue();
            assertThat(reply.body().getBoolean("isWritablePrimary")).isEqualTo(BsonBoolean.TRUE);
        }
    }

    @Test
    void clientsCannotSendReplies() throws Exception {
        try (WireClient c = new WireClient(fixture.port())) {
            c.send(OpReply.reply(0, cmd("{ok: 1}")), null);
            OpMsg reply = (OpMsg) c.receive().message();
            assertThat(reply.body().getNumber("code").intValue()).isEqualTo(17);
            assertThat(c.closedByPeer()).isTrue();
        }
    }
}
