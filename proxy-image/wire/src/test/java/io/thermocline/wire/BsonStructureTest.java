package io.thermocline.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.bson.BsonArray;
import org.bson.BsonBinaryReader;
import org.bson.BsonDbPointer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInvalidOperationException;
import org.bson.BsonJavaScriptWithScope;
import org.bson.BsonSerializationException;
import org.bson.BsonType;
import org.bson.RawBsonDocument;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

/** {@link BsonStructure} accepts and refuses exactly what a walk with the bson library's reader does. */
class BsonStructureTest {

    private static final BsonDocument EVERY_TYPE = BsonDocument.parse("{"
                    + "d: 1.5, s: 'text é', doc: {a: [1, {b: 2}, []], e: {}}, arr: [1, 'x', {c: 3}, [[]]],"
                    + " bin: {$binary: {base64: 'AAECAw==', subType: '04'}}, undef: {$undefined: true},"
                    + " oid: {$oid: '5f43a1b2c3d4e5f6a7b8c9d0'}, t: true, date: {$date: 1700000000000}, nil: null,"
                    + " re: {$regularExpression: {pattern: 'a.*b', options: 'im'}}, js: {$code: 'x = 1'},"
                    + " sym: {$symbol: 'sym'}, i: {$numberInt: '-7'}, ts: {$timestamp: {t: 9, i: 3}},"
                    + " l: {$numberLong: '-123456789012'}, dec: {$numberDecimal: '1.25'}, min: {$minKey: 1},"
                    + " max: {$maxKey: 1}, 'ñame': 'é', empty: ''}")
            .append("ptr", new BsonDbPointer("db.c", new ObjectId("5f43a1b2c3d4e5f6a7b8c9d0")))
            .append("jsScope", new BsonJavaScriptWithScope("y = z", new BsonDocument("z", new BsonInt32(4))));

    @Test
    void acceptsAndRefusesWhatTheLibrarysReaderDoesOnMutatedDocuments() {
        byte[] valid = bytes(OpMsg.raw(EVERY_TYPE));
        assertThat(accepts(valid)).isTrue();
        assertThat(readerAccepts(valid)).isTrue();
        Random random = new Random(39);
        int refused = 0;
        for (int round = 0; round < 40_000; round++) {
            byte[] mutated = valid.clone();
            int changes = 1 + random.nextInt(3);
            for (int c = 0; c < changes; c++) {
                int at = 4 + random.nextInt(mutated.length - 4); // the outer length is WireCodec's to check
                mutated[at] = switch (random.nextInt(4)) {
                    case 0 -> 0;
                    case 1 -> (byte) (mutated[at] + 1);
                    case 2 -> (byte) (mutated[at] - 1);
                    default -> (byte) random.nextInt(256);
                };
            }
            boolean expected = readerAccepts(mutated);
            assertThat(accepts(mutated)).as("round %d", round).isEqualTo(expected);
            refused += expected ? 0 : 1;
        }
        assertThat(refused).as("mutations the reader refused").isGreaterThan(10_000);
    }

    @Test
    void documentsNestDeeperThan200LevelsAreRefusedArraysAreNotLimitedByThemselves() {
        assertThat(accepts(bytes(OpMsg.raw(nested(200, false))))).isTrue();
        assertThatThrownBy(() -> check(bytes(OpMsg.raw(nested(201, false)))))
                .isInstanceOf(BsonSerializationException.class)
                .hasMessageContaining("200");
        byte[] arrays = bytes(OpMsg.raw(nested(300, true)));
        assertThat(accepts(arrays)).isEqualTo(readerAccepts(arrays)).isTrue();
    }

    private static BsonDocument nested(int depth, boolean arrays) {
        BsonDocument top = new BsonDocument();
        if (arrays) {
            BsonArray array = new BsonArray();
            BsonArray inner = array;
            for (int i = 1; i < depth; i++) {
                BsonArray next = new BsonArray();
                inner.add(next);
                inner = next;
            }
            return top.append("a", array);
        }
        BsonDocument inner = top;
        for (int i = 0; i < depth; i++) {
            BsonDocument next = new BsonDocument();
            inner.append("n", next);
            inner = next;
        }
        return top;
    }

    private static byte[] bytes(RawBsonDocument document) {
        ByteBuffer b = document.getByteBuffer().asNIO();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static void check(byte[] document) {
        BsonStructure.check(document, 0, document.length);
    }

    private static boolean accepts(byte[] document) {
        try {
            check(document);
            return true;
        } catch (BsonSerializationException e) {
            return false;
        }
    }

    /** The check WireCodec made before BsonStructure: a walk of every element with the library's reader. */
    private static boolean readerAccepts(byte[] document) {
        try (BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(document))) {
            walkDocument(reader, 0);
            return true;
        } catch (BsonSerializationException
                | BsonInvalidOperationException
                | IllegalArgumentException
                | IndexOutOfBoundsException
                | BufferUnderflowException e) {
            return false;
        }
    }

    private static void walkDocument(BsonBinaryReader reader, int depth) {
        if (depth > 200) {
            throw new BsonSerializationException("documents are nested deeper than 200 levels");
        }
        reader.readStartDocument();
        walkElements(reader, depth, true);
        reader.readEndDocument();
    }

    private static void walkElements(BsonBinaryReader reader, int depth, boolean named) {
        BsonType type;
        while ((type = reader.readBsonType()) != BsonType.END_OF_DOCUMENT) {
            if (named) {
                reader.skipName();
            }
            switch (type) {
                case DOCUMENT -> walkDocument(reader, depth + 1);
                case ARRAY -> {
                    reader.readStartArray();
                    walkElements(reader, depth + 1, false);
                    reader.readEndArray();
                }
                case JAVASCRIPT_WITH_SCOPE -> {
                    reader.readJavaScriptWithScope();
                    walkDocument(reader, depth + 1);
                }
                case STRING -> reader.readString();
                default -> reader.skipValue();
            }
        }
    }
}
