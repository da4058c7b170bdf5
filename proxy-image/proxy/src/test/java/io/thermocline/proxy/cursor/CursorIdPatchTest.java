package io.thermocline.proxy.cursor;

import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class CursorIdPatchTest {

    @Test
    void replacesOnlyTheCursorId() {
        RawBsonDocument reply = OpMsg.raw(BsonDocument.parse("{cursor: {firstBatch: [{id: {$numberLong: '5'}}],"
                + " id: {$numberLong: '123'}, ns: 'a.b'}, id: {$numberLong: '123'}, ok: 1}"));
        RawBsonDocument patched = CursorIdPatch.withCursorId(reply, 987654321012L);
        assertThat(patched.getDocument("cursor").getInt64("id").getValue()).isEqualTo(987654321012L);
        assertThat(patched.getInt64("id").getValue()).isEqualTo(123);
        assertThat(patched.getDocument("cursor").getArray("firstBatch").get(0).asDocument().getInt64("id").getValue()).isEqualTo(5);
        assertThat(patched.getDocument("cursor").getString("ns").getValue()).isEqualTo("a.b");
    }

    @Test
    void repliesWithoutCursorAreUntouched() {
        RawBsonDocument reply = OpMsg.raw(BsonDocument.parse("{n: 1, ok: 1}"));
        assertThat(CursorIdPatch.withCursorId(reply, 1)).isSameAs(reply);
    }

    @Test
    void proxyIdsNameTheirInstanceAndArePositive() {
        ProxyCursorIds a = new ProxyCursorIds("proxy-a");
        ProxyCursorIds b = new ProxyCursorIds("proxy-b");
        for (int i = 0; i < 1000; i++) {
            long id = a.next();
            assertThat(id).isPositive();
            assertThat(a.ownedHere(id)).isTrue();
            assertThat(ProxyCursorIds.ownerOf(id)).isEqualTo(a.instanceBits());
        }
        assertThat(a.instanceBits()).isNotEqualTo(b.instanceBits());
        assertThat(b.ownedHere(a.next())).isFalse();
    }
}
