package io.thermocline.proxy.command;

import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ReplyFactsTest {

    @Test
    void readsOkClusterTimeAndCursorInOnePass() {
        RawBsonDocument reply = OpMsg.raw(BsonDocument.parse("{cursor: {firstBatch: [{id: {$numberLong: '5'}, ok: 0}],"
                + " id: {$numberLong: '123'}, ns: 'a.b'}, ok: 1.0,"
                + " $clusterTime: {clusterTime: {$timestamp: {t: 7, i: 3}}, signature: {keyId: {$numberLong: '0'}}},"
                + " operationTime: {$timestamp: {t: 7, i: 3}}}"));
        ReplyFacts facts = ReplyFacts.of(reply);
        assertThat(facts.ok()).isTrue();
        assertThat(facts.code()).isZero();
        assertThat(facts.cursorId()).isEqualTo(123);
        assertThat(facts.cursorNs()).isEqualTo("a.b");
        assertThat(facts.clusterTime().getTimestamp("clusterTime")).isEqualTo(new BsonTimestamp(7, 3));
    }

    @Test
    void replacesOnlyTheCursorId() {
        RawBsonDocument reply = OpMsg.raw(BsonDocument.parse("{cursor: {firstBatch: [{id: {$numberLong: '5'}}],"
                + " id: {$numberLong: '123'}, ns: 'a.b'}, id: {$numberLong: '123'}, ok: 1}"));
        RawBsonDocument patched = ReplyFacts.of(reply).withCursorId(reply, 987654321012L);
        assertThat(patched.getDocument("cursor").getInt64("id").getValue()).isEqualTo(987654321012L);
        assertThat(patched.getInt64("id").getValue()).isEqualTo(123);
        assertThat(patched.getDocument("cursor").getArray("firstBatch").get(0).asDocument().getInt64("id").getValue()).isEqualTo(5);
        assertThat(patched.getDocument("cursor").getString("ns").getValue()).isEqualTo("a.b");
        assertThat(reply.getDocument("cursor").getInt64("id").getValue()).isEqualTo(123);
    }

    @Test
    void patchesAReplyThatIsAWindowOnALargerMessage() {
        byte[] doc = OpMsg.raw(BsonDocument.parse("{cursor: {firstBatch: [{a: 1}], id: {$numberLong: '77'}, ns: 'a.b'}, ok: 1}"))
                .getByteBuffer().array();
        byte[] message = new byte[doc.length + 21];
        System.arraycopy(doc, 0, message, 21, doc.length);
        RawBsonDocument reply = new RawBsonDocument(message, 21, doc.length);
        RawBsonDocument patched = ReplyFacts.of(reply).withCursorId(reply, 42);
        assertThat(patched.getDocument("cursor").getInt64("id").getValue()).isEqualTo(42);
        assertThat(patched.getDocument("cursor").getArray("firstBatch")).hasSize(1);
    }

    @Test
    void errorsKeepTheirCodeAndRepliesWithoutCursorAreUntouched() {
        RawBsonDocument reply = OpMsg.raw(BsonDocument.parse("{ok: 0.0, errmsg: 'not primary', code: 10107, codeName: 'NotWritablePrimary'}"));
        ReplyFacts facts = ReplyFacts.of(reply);
        assertThat(facts.ok()).isFalse();
        assertThat(facts.code()).isEqualTo(10107);
        assertThat(facts.clusterTime()).isNull();
        assertThat(facts.cursorId()).isZero();
        assertThat(facts.withCursorId(reply, 1)).isSameAs(reply);
    }
}
