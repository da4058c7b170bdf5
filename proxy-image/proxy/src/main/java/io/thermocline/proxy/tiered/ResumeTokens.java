package io.thermocline.proxy.tiered;

import org.bson.BsonDocument;
import org.bson.BsonTimestamp;

/**
 * The cluster time a change stream resume token starts with. MongoDB 4.2+ tokens are
 * {@code {_data: hex}} of a KeyString whose first value is the event's (or, for a high-water mark, the
 * scan's) cluster time: type byte {@code 0x82}, then the timestamp's 8 bytes, big-endian. Drivers treat
 * tokens as opaque; this reads only that first value, and anything else reads as unknown.
 */
final class ResumeTokens {

    private static final String TIMESTAMP_TYPE = "82";

    private ResumeTokens() {
    }

    /** The token's cluster time, or null when the token is not of that form. */
    static BsonTimestamp clusterTime(BsonDocument token) {
        if (token == null || !token.isString("_data")) {
            return null;
        }
        String hex = token.getString("_data").getValue();
        if (hex.length() < 18 || !hex.regionMatches(true, 0, TIMESTAMP_TYPE, 0, 2)) {
            return null;
        }
        try {
            return new BsonTimestamp(Long.parseUnsignedLong(hex.substring(2, 18), 16));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
