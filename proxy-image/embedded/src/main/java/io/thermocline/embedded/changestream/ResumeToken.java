package io.thermocline.embedded.changestream;

import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.ReplicationException;
import java.util.HexFormat;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A change stream resume token {@code {_data: hex}}: version byte, the event's oplog position
 * and the token's kind. Drivers treat it as opaque; resuming from it is exact.
 */
public record ResumeToken(OplogPosition position, Kind kind) {
    private static final String VERSION = "82";

    public enum Kind {
        EVENT, HIGH_WATER_MARK, INVALIDATE
    }

    public BsonDocument toBson() {
        String hex = VERSION + String.format("%016x", position.timestamp()) + String.format("%08x", position.index())
            + String.format("%02x", kind.ordinal());
        return new BsonDocument("_data", new BsonString(hex.toUpperCase()));
    }

    public static ResumeToken parse(BsonValue token) {
        if (token == null || !token.isDocument() || !token.asDocument().isString("_data")) {
            throw new ReplicationException(260, "InvalidResumeToken", "resume token must be a document with a string _data field");
        }
        String hex = token.asDocument().getString("_data").getValue();
        if (hex.length() != 2 + 16 + 8 + 2 || !hex.startsWith(VERSION)) {
            throw new ReplicationException(260, "InvalidResumeToken", "resume token " + hex + " was not issued by this replica set");
        }
        try {
            long ts = Long.parseUnsignedLong(hex.substring(2, 18), 16);
            int index = (int) Long.parseLong(hex.substring(18, 26), 16);
            int kind = HexFormat.fromHexDigits(hex.substring(26, 28));
            if (kind >= Kind.values().length) {
                throw new NumberFormatException("kind " + kind);
            }
            return new ResumeToken(new OplogPosition(ts, index), Kind.values()[kind]);
        } catch (NumberFormatException e) {
            throw new ReplicationException(260, "InvalidResumeToken", "resume token " + hex + " is malformed");
        }
    }
}
