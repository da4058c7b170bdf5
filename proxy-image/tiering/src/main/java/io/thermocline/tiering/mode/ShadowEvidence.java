package io.thermocline.tiering.mode;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * One proxy instance's shadow evidence for one namespace ({@code thermocline.shadow}, MODES contract).
 * {@code skipped} counts sampled reads not compared (the follower had not caught up with the archive
 * time the read saw, or the namespace changed meanwhile, or the queue was full); {@code comparedSinceDivergence}
 * is what the cutover gate counts (comparisons since this instance's last divergence).
 */
public record ShadowEvidence(String instance, String namespace, long reads, long wouldServe, long compared, long agreed,
                             long diverged, long skipped, long comparedSinceDivergence, Instant lastComparedAt,
                             Instant lastDivergenceAt, List<Sample> samples, Instant updatedAt) {

    public static final int MAX_SAMPLES = 5;

    /** A divergent comparison: the ids involved and the differing field paths, never the documents' contents. */
    public record Sample(Instant at, List<BsonValue> ids, List<String> fields) {
    }

    public static ShadowEvidence empty(String instance, String namespace) {
        return new ShadowEvidence(instance, namespace, 0, 0, 0, 0, 0, 0, 0, null, null, List.of(), null);
    }

    public String id() {
        return instance + "|" + namespace;
    }

    public BsonDocument toBson() {
        BsonArray s = new BsonArray();
        for (Sample sample : samples) {
            BsonArray fields = new BsonArray();
            sample.fields().forEach(f -> fields.add(new BsonString(f)));
            s.add(new BsonDocument("at", ModeDocument.date(sample.at())).append("ids", new BsonArray(sample.ids()))
                    .append("fields", fields));
        }
        return new BsonDocument("_id", new BsonString(id())).append("instance", new BsonString(instance))
                .append("namespace", new BsonString(namespace))
                .append("reads", new BsonInt64(reads)).append("wouldServe", new BsonInt64(wouldServe))
                .append("compared", new BsonInt64(compared)).append("agreed", new BsonInt64(agreed))
                .append("diverged", new BsonInt64(diverged)).append("skipped", new BsonInt64(skipped))
                .append("comparedSinceDivergence", new BsonInt64(comparedSinceDivergence))
                .append("lastComparedAt", ModeDocument.date(lastComparedAt))
                .append("lastDivergenceAt", ModeDocument.date(lastDivergenceAt))
                .append("samples", s)
                .append("updatedAt", new BsonDateTime((updatedAt == null ? Instant.now() : updatedAt).toEpochMilli()));
    }

    public static ShadowEvidence fromBson(BsonDocument d) {
        List<Sample> samples = new ArrayList<>();
        for (BsonValue v : d.getArray("samples", new BsonArray())) {
            BsonDocument s = v.asDocument();
            samples.add(new Sample(ModeDocument.instant(s.get("at")), List.copyOf(s.getArray("ids", new BsonArray())),
                    s.getArray("fields", new BsonArray()).stream().map(f -> f.asString().getValue()).toList()));
        }
        return new ShadowEvidence(d.getString("instance").getValue(), d.getString("namespace").getValue(),
                count(d, "reads"), count(d, "wouldServe"), count(d, "compared"), count(d, "agreed"), count(d, "diverged"),
                count(d, "skipped"), count(d, "comparedSinceDivergence"), ModeDocument.instant(d.get("lastComparedAt")),
                ModeDocument.instant(d.get("lastDivergenceAt")), samples, ModeDocument.instant(d.get("updatedAt")));
    }

    private static long count(BsonDocument d, String field) {
        return d.isNumber(field) ? d.getNumber(field).longValue() : 0;
    }
}
