package io.thermocline.proxy.topology;

/**
 * A valid read preference no member of the tier satisfies (mode {@code secondary} with no eligible secondary, or
 * {@code nearest} whose tags exclude every member): the client gets {@code FailedToSatisfyReadPreference} (133), as
 * from a mongos, and the read reaches no member rather than one the preference excludes.
 */
public final class UnsatisfiableReadPreference extends RuntimeException {

    public UnsatisfiableReadPreference(String message) {
        super(message, null, false, false);
    }
}
