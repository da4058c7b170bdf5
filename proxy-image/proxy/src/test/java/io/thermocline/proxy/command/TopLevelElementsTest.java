package io.thermocline.proxy.command;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.wire.OpMsg;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDbPointer;
import org.bson.BsonDocument;
import org.bson.BsonSerializationException;
import org.bson.BsonType;
import org.bson.RawBsonDocument;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

class TopLevelElementsTest {

    /** One element of every BSON type, with names ASCII and not. */
    private static final BsonDocument EVERY_TYPE = BsonDocument.parse("{"
                    + "d: 1.5, s: 'text é', doc: {a: [1, {b: 2}]}, arr: [1, 'x', {c: 3}],"
                    + " bin: {$binary: {base64: 'AAECAw==', subType: '04'}}, undef: {$undefined: true},"
                    + " oid: {$oid: '5f43a1b2c3d4e5f6a7b8c9d0'}, t: true, f: false, date: {$date: 1700000000000}, nil: null,"
                    + " re: {$regularExpression: {pattern: 'a.*b', options: 'im'}},"
                    + " js: {$code: 'x = 1'}, sym: {$symbol: 'sym'},"
                    + " jsScope: {$code: 'y = z', $scope: {z: 4}}, i: {$numberInt: '-7'},"
                    + " ts: {$timestamp: {t: 9, i: 3}}, l: {$numberLong: '-123456789012'},"
                    + " dec: {$numberDecimal: '1.25'}, min: {$minKey: 1}, max: {$maxKey: 1}, 'ñame': 'é'}")
            .append("ptr", new BsonDbPointer("db.c", new ObjectId("5f43a1b2c3d4e5f6a7b8c9d0")));

    @Test
    void walksEveryTypeAndDecodesEachValueAsTheLibraryDoes() {
        RawBsonDocument raw = OpMsg.raw(EVERY_TYPE);
        TopLevelElements elements = new TopLevelElements(raw);
        List<String> names = new ArrayList<>();
        while (elements.next()) {
            String name = elements.name();
            names.add(name);
            assertThat(elements.nameIs(name)).as(name).isTrue();
            assertThat(elements.nameIs(name + "x")).as(name).isFalse();
            assertThat(elements.type()).as(name).isEqualTo(EVERY_TYPE.get(name).getBsonType());
            assertThat(elements.value()).as(name).isEqualTo(EVERY_TYPE.get(name));
        }
        assertThat(names).containsExactlyElementsOf(EVERY_TYPE.keySet());
        assertThat(elements.next()).isFalse();
    }

    @Test
    void comparesNamesByteForByteIncludingBeyondAscii() {
        TopLevelElements elements = new TopLevelElements(OpMsg.raw(BsonDocument.parse("{ñame: 1, na: 2, name: 3}")));
        assertThat(elements.next()).isTrue();
        assertThat(elements.nameIs("ñame")).isTrue();
        assertThat(elements.nameIs("name")).isFalse();
        assertThat(elements.next()).isTrue();
        assertThat(elements.nameIs("n")).isFalse();
        assertThat(elements.nameIs("nam")).isFalse();
        assertThat(elements.nameIs("na")).isTrue();
        assertThat(elements.next()).isTrue();
        assertThat(elements.nameIs("ñame")).isFalse();
        assertThat(elements.nameIs("name")).isTrue();
    }

    @Test
    void readsNumbersStringsAndNestedDocumentsInPlace() {
        RawBsonDocument raw = OpMsg.raw(
                BsonDocument.parse(
                        "{ok: 1.0, code: {$numberLong: '11600'}, yes: true, s: 'abc', cursor: {id: {$numberLong: '42'}, ns: 'a.b'}}"));
        TopLevelElements e = new TopLevelElements(raw);
        e.next();
        assertThat(e.number()).isEqualTo(1.0);
        e.next();
        assertThat(e.number()).isEqualTo(11600);
        e.next();
        assertThat(e.number()).isEqualTo(1);
        e.next();
        assertThat(e.number()).isZero();
        assertThat(e.string()).isEqualTo("abc");
        e.next();
        assertThat(e.rawDocument()).isEqualTo(BsonDocument.parse("{id: {$numberLong: '42'}, ns: 'a.b'}"));
        TopLevelElements cursor = e.inner();
        cursor.next();
        assertThat(cursor.int64()).isEqualTo(42);
        assertThat(ByteBuffer.wrap(cursor.bytes(), cursor.valueStart(), 8)
                        .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                        .getLong())
                .isEqualTo(42);
    }

    @Test
    void aDocumentThatIsAWindowOnALargerArrayIsWalkedWithinItsOwnLength() {
        byte[] doc =
                OpMsg.raw(BsonDocument.parse("{a: 1, b: 'x'}")).getByteBuffer().array();
        byte[] message = new byte[doc.length + 9];
        System.arraycopy(doc, 0, message, 9, doc.length);
        TopLevelElements e = new TopLevelElements(new RawBsonDocument(message, 9, doc.length));
        assertThat(e.next()).isTrue();
        assertThat(e.next()).isTrue();
        assertThat(e.value().asString().getValue()).isEqualTo("x");
        assertThat(e.next()).isFalse();
    }

    @Test
    void aMalformedDocumentFailsWithoutReadingPastIt() {
        byte[] bytes = OpMsg.raw(new BsonDocument("s", new org.bson.BsonString("abc"))
                        .append("b", new BsonBinary(BsonBinarySubType.BINARY, new byte[] {1, 2})))
                .getByteBuffer()
                .array()
                .clone();
        int size =
                ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0);
        byte[] stringTooLong = bytes.clone();
        stringTooLong[7] = 100; // the string's length, beyond the document
        assertThatThrownBy(() -> walk(stringTooLong, size)).isInstanceOf(BsonSerializationException.class);
        byte[] unknownType = bytes.clone();
        unknownType[4] = 0x42;
        assertThatThrownBy(() -> walk(unknownType, size)).isInstanceOf(BsonSerializationException.class);
        byte[] unterminated = bytes.clone();
        unterminated[size - 1] = 1;
        assertThatThrownBy(() -> walk(unterminated, size)).isInstanceOf(BsonSerializationException.class);
        assertThatThrownBy(() -> walk(bytes, 3)).isInstanceOf(BsonSerializationException.class);
        assertThat(BsonType.findByValue(0x42)).isNull();
    }

    private static void walk(byte[] bytes, int length) {
        TopLevelElements e = new TopLevelElements(bytes, 0, length);
        while (e.next()) {
            e.value();
        }
    }
}
