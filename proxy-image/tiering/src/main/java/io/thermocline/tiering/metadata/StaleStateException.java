package io.thermocline.tiering.metadata;

/**
 * A conditional write to the shared state found another version than the one it was based on:
 * another instance changed it meanwhile. The caller re-reads and decides again, or stops when it
 * has lost its lease.
 */
public final class StaleStateException extends RuntimeException {
    public StaleStateException(String message) {
        super(message);
    }
}
