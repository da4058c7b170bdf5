package io.thermocline.proxy.command;

import io.thermocline.wire.OpMsg;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.ByteBufNIO;
import org.bson.RawBsonDocument;
import org.bson.io.ByteBufferBsonInput;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Set;

/**
 * Edits the top level of a command body without decoding its payload: kept elements are copied
 * as raw bytes (a large document in an insert's body is copied, never decoded and re-encoded),
 * replaced elements keep their position (the command name stays first), appended ones go last.
 */
public final class CommandEnvelope {

    private CommandEnvelope() {
    }

    public static RawBsonDocument edit(RawBsonDocument body, Map<String, BsonValue> replace, Set<String> drop,
                                       BsonDocument append) {
        ByteBuffer nio = body.getByteBuffer().asNIO().order(ByteOrder.LITTLE_ENDIAN);
        byte[] bytes = new byte[nio.remaining()];
        nio.get(bytes);
        ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + 256);
        out.write(bytes, 0, 4);
        ByteBufferBsonInput input = new ByteBufferBsonInput(new ByteBufNIO(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)));
        try (BsonBinaryReader reader = new BsonBinaryReader(input)) {
            reader.readStartDocument();
            while (true) {
                int start = input.getPosition();
                if (reader.readBsonType() == BsonType.END_OF_DOCUMENT) {
                    break;
                }
                String name = reader.readName();
                reader.skipValue();
                int end = input.getPosition();
                if (drop.contains(name) || append.containsKey(name)) {
                    continue;
                }
                BsonValue replacement = replace.get(name);
                if (replacement != null) {
                    writeElement(out, name, replacement);
                } else {
                    out.write(bytes, start, end - start);
                }
            }
        }
        for (Map.Entry<String, BsonValue> e : append.entrySet()) {
            writeElement(out, e.getKey(), e.getValue());
        }
        out.write(0);
        byte[] result = out.toByteArray();
        ByteBuffer.wrap(result).order(ByteOrder.LITTLE_ENDIAN).putInt(0, result.length);
        return new RawBsonDocument(result);
    }

    private static void writeElement(ByteArrayOutputStream out, String name, BsonValue value) {
        RawBsonDocument single = OpMsg.raw(new BsonDocument(name, value));
        ByteBuffer nio = single.getByteBuffer().asNIO();
        byte[] b = new byte[nio.remaining()];
        nio.get(b);
        out.write(b, 4, b.length - 5);
    }
}
