package io.thermocline.proxy.topology;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The {@code $readPreference} a driver sends to a mongos, parsed. A replica-set member only
 * needs to know whether it may serve the read; choosing the member is the proxy's job.
 */
public record ReadPreference(Mode mode, List<BsonDocument> tagSets, long maxStalenessSeconds) {

    public enum Mode { PRIMARY, PRIMARY_PREFERRED, SECONDARY, SECONDARY_PREFERRED, NEAREST }

    public static final ReadPreference PRIMARY = new ReadPreference(Mode.PRIMARY, List.of(), -1);

    /** Parses a {@code $readPreference} document; absent or unreadable means primary. */
    public static ReadPreference parse(BsonValue value) {
        if (value == null || !value.isDocument()) {
            return PRIMARY;
        }
        BsonDocument doc = value.asDocument();
        BsonValue modeValue = doc.get("mode");
        if (modeValue == null || !modeValue.isString()) {
            return PRIMARY;
        }
        Mode mode = switch (modeValue.asString().getValue().toLowerCase(Locale.ROOT)) {
            case "primarypreferred" -> Mode.PRIMARY_PREFERRED;
            case "secondary" -> Mode.SECONDARY;
            case "secondarypreferred" -> Mode.SECONDARY_PREFERRED;
            case "nearest" -> Mode.NEAREST;
            default -> Mode.PRIMARY;
        };
        List<BsonDocument> tagSets = new ArrayList<>();
        BsonValue tags = doc.get("tags");
        if (tags instanceof BsonArray array) {
            for (BsonValue t : array) {
                if (t.isDocument()) {
                    tagSets.add(t.asDocument());
                }
            }
        }
        BsonValue staleness = doc.get("maxStalenessSeconds");
        long max = staleness != null && staleness.isNumber() ? staleness.asNumber().longValue() : -1;
        return new ReadPreference(mode, List.copyOf(tagSets), max);
    }
}
