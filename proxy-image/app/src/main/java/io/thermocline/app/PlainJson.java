package io.thermocline.app;

import java.time.Instant;
import org.bson.BsonDocument;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;

/**
 * The CLI's JSON for tools such as {@code jq}: plain JSON, not MongoDB Extended JSON. Dates are ISO-8601
 * strings, 64-bit integers are numbers, optimes are {@code {"t": seconds, "i": increment}}, ObjectIds are
 * hex strings (docs/operations schema in docs/adoption.md, "thermocline status --json").
 */
final class PlainJson {

    private static final JsonWriterSettings SETTINGS = JsonWriterSettings.builder()
            .outputMode(JsonMode.RELAXED)
            .indent(true)
            .dateTimeConverter((millis, w) -> w.writeString(Instant.ofEpochMilli(millis).toString()))
            .int64Converter((value, w) -> w.writeNumber(Long.toString(value)))
            .int32Converter((value, w) -> w.writeNumber(Integer.toString(value)))
            .doubleConverter((value, w) -> {
                if (value.isNaN() || value.isInfinite()) {
                    w.writeNull();
                } else {
                    w.writeNumber(Double.toString(value));
                }
            })
            .timestampConverter((t, w) -> {
                w.writeStartObject();
                w.writeNumber("t", Long.toString(t.getTime() & 0xFFFFFFFFL));
                w.writeNumber("i", Integer.toString(t.getInc()));
                w.writeEndObject();
            })
            .objectIdConverter((id, w) -> w.writeString(id.toHexString()))
            .build();

    private PlainJson() {
    }

    static String of(BsonDocument document) {
        return document.toJson(SETTINGS);
    }
}
