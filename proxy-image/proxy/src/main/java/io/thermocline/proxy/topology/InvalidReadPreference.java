package io.thermocline.proxy.topology;

/**
 * A {@code $readPreference} a mongos refuses: the client gets the mongos error ({@link Kind}) and the
 * message saying what to change, and the command reaches no member.
 */
public final class InvalidReadPreference extends RuntimeException {

    /** The server error a mongos answers with: {@code BadValue} (2) or {@code MaxStalenessOutOfRange} (160). */
    public enum Kind { BAD_VALUE, MAX_STALENESS_OUT_OF_RANGE }

    private final Kind kind;

    InvalidReadPreference(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
