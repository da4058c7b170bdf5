package io.thermocline.proxy.command;

import io.thermocline.wire.OpMsg;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Edits the top level of a command body without decoding its payload: kept elements are copied
 * as raw bytes (a large document in an insert's body is copied, never decoded and re-encoded),
 * replaced elements keep their position (the command name stays first), appended ones go last.
 */
public final class CommandEnvelope {

    private CommandEnvelope() {}

    public static RawBsonDocument edit(
            RawBsonDocument body, Map<String, BsonValue> replace, Set<String> drop, BsonDocument append) {
        TopLevelElements elements = new TopLevelElements(body);
        byte[] bytes = elements.bytes();
        ByteArrayOutputStream out =
                new ByteArrayOutputStream(body.getByteBuffer().remaining() + 256);
        out.write(0);
        out.write(0);
        out.write(0);
        out.write(0);
        // the names to leave out, gathered once: each element is compared with every one of them
        String[] skipped = new String[drop.size() + append.size()];
        int n = 0;
        for (String name : drop) {
            skipped[n++] = name;
        }
        for (String name : append.keySet()) {
            skipped[n++] = name;
        }
        while (elements.next()) {
            if (named(elements, skipped)) {
                continue;
            }
            BsonValue replacement = replace.isEmpty() ? null : replacement(elements, replace);
            if (replacement != null) {
                writeElement(out, elements.name(), replacement);
            } else {
                out.write(bytes, elements.elementStart(), elements.elementEnd() - elements.elementStart());
            }
        }
        for (Map.Entry<String, BsonValue> e : append.entrySet()) {
            writeElement(out, e.getKey(), e.getValue());
        }
        out.write(0);
        byte[] result = out.toByteArray();
        TopLevelElements.putInt32(result, result.length);
        return new RawBsonDocument(result);
    }

    private static boolean named(TopLevelElements element, String[] names) {
        for (String name : names) {
            if (element.nameIs(name)) {
                return true;
            }
        }
        return false;
    }

    private static BsonValue replacement(TopLevelElements element, Map<String, BsonValue> replace) {
        for (Map.Entry<String, BsonValue> e : replace.entrySet()) {
            if (element.nameIs(e.getKey())) {
                return e.getValue();
            }
        }
        return null;
    }

    private static void writeElement(ByteArrayOutputStream out, String name, BsonValue value) {
        if (value instanceof RawBsonDocument raw) {
            // a document already in bytes (a tier's $clusterTime) is copied as it is
            ByteBuffer nio = raw.getByteBuffer().asNIO();
            out.write(BsonType.DOCUMENT.getValue());
            out.writeBytes(name.getBytes(StandardCharsets.UTF_8));
            out.write(0);
            out.write(nio.array(), nio.arrayOffset() + nio.position(), nio.remaining());
            return;
        }
        RawBsonDocument single = OpMsg.raw(new BsonDocument(name, value));
        ByteBuffer nio = single.getByteBuffer().asNIO();
        out.write(nio.array(), nio.arrayOffset() + nio.position() + 4, nio.remaining() - 5);
    }
}
