package io.thermocline.proxy.topology;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code $readPreference} a driver sends to a mongos, parsed and checked as a mongos checks it
 * (the server-selection and max-staleness specifications). A replica-set member only needs to know
 * whether it may serve the read; choosing the member is the proxy's job.
 *
 * @param maxStalenessSeconds -1 when none
 */
public record ReadPreference(Mode mode, List<BsonDocument> tagSets, long maxStalenessSeconds) {

    public enum Mode {
        PRIMARY("primary"), PRIMARY_PREFERRED("primaryPreferred"), SECONDARY("secondary"),
        SECONDARY_PREFERRED("secondaryPreferred"), NEAREST("nearest");

        private final String wireName;

        Mode(String wireName) {
            this.wireName = wireName;
        }

        public String wireName() {
            return wireName;
        }

        /** Whether a secondary may serve a read of this mode. */
        public boolean allowsSecondaries() {
            return this != PRIMARY;
        }

        /** Whether, with no other member eligible, the primary serves a read of this mode (so it waits for one). */
        public boolean acceptsPrimary() {
            return this == PRIMARY || this == PRIMARY_PREFERRED || this == SECONDARY_PREFERRED;
        }
    }

    /** The smallest maxStalenessSeconds a mongos accepts (its fixed floor; drivers use the same 90 s). */
    public static final long SMALLEST_MAX_STALENESS_SECONDS = 90;

    /** As a client wrote it, for error messages: {@code {mode: "secondary", tags: [...], maxStalenessSeconds: 90}}. */
    public String describe() {
        return "{mode: \"" + mode.wireName() + "\"" + (tagSets.isEmpty() ? "" : ", tags: " + tagSets)
                + (maxStalenessSeconds > 0 ? ", maxStalenessSeconds: " + maxStalenessSeconds : "") + "}";
    }

    public static final ReadPreference PRIMARY = new ReadPreference(Mode.PRIMARY, List.of(), -1);

    /** What a collection's {@code secondaryReads: offload} turns a primary read into: any caught-up member, primary included. */
    public static final ReadPreference OFFLOAD = new ReadPreference(Mode.SECONDARY_PREFERRED, List.of(), -1);

    /**
     * Parses a {@code $readPreference} document; absent means primary.
     *
     * @throws InvalidReadPreference for what a mongos refuses: an unknown mode, tags or maxStalenessSeconds with
     *                               mode primary, a maxStalenessSeconds below 90 or not a number
     */
    public static ReadPreference parse(BsonValue value) {
        if (value == null) {
            return PRIMARY;
        }
        if (!value.isDocument()) {
            throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                    "$readPreference must be a document such as {mode: 'secondaryPreferred'}");
        }
        BsonDocument doc = value.asDocument();
        BsonValue modeValue = doc.get("mode");
        if (modeValue == null || !modeValue.isString()) {
            throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                    "$readPreference needs a string mode: primary, primaryPreferred, secondary, secondaryPreferred or nearest");
        }
        Mode mode = modeOf(modeValue.asString().getValue());
        List<BsonDocument> tagSets = new ArrayList<>();
        BsonValue tags = doc.get("tags");
        if (tags != null) {
            if (!(tags instanceof BsonArray array)) {
                throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                        "$readPreference tags must be an array of tag sets, such as [{dc: 'east'}, {}]");
            }
            for (BsonValue t : array) {
                if (!t.isDocument()) {
                    throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                            "$readPreference tags must be an array of documents, found " + t.getBsonType());
                }
                tagSets.add(t.asDocument());
            }
        }
        if (mode == Mode.PRIMARY && tagSets.stream().anyMatch(t -> !t.isEmpty())) {
            throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                    "Only empty tags are allowed with primary read preference");
        }
        long max = maxStaleness(doc.get("maxStalenessSeconds"), mode);
        return new ReadPreference(mode, List.copyOf(tagSets), max);
    }

    private static Mode modeOf(String name) {
        for (Mode m : Mode.values()) {
            if (m.wireName.equals(name)) {
                return m;
            }
        }
        throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE, "'" + name + "' is not a read preference"
                + " mode; use primary, primaryPreferred, secondary, secondaryPreferred or nearest");
    }

    private static long maxStaleness(BsonValue value, Mode mode) {
        if (value == null) {
            return -1;
        }
        if (!value.isNumber()) {
            throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                    "maxStalenessSeconds must be a number, found " + value.getBsonType());
        }
        double seconds = value.asNumber().doubleValue();
        if (seconds == -1 || seconds == 0) {
            return -1; // "no maximum", as drivers send it
        }
        if (seconds < 0) {
            throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                    "maxStalenessSeconds must be a non-negative number (or -1 for no maximum)");
        }
        if (mode == Mode.PRIMARY) {
            throw new InvalidReadPreference(InvalidReadPreference.Kind.BAD_VALUE,
                    "maxStalenessSeconds can not be set for the primary mode");
        }
        if (seconds < SMALLEST_MAX_STALENESS_SECONDS) {
            throw new InvalidReadPreference(InvalidReadPreference.Kind.MAX_STALENESS_OUT_OF_RANGE,
                    "maxStalenessSeconds value can not be less than " + SMALLEST_MAX_STALENESS_SECONDS);
        }
        return (long) seconds;
    }
}
