package io.thermocline.proxy.pool;

/** Every pooled connection to a member stayed busy for the whole bounded wait. */
public final class PoolTimeoutException extends RuntimeException {
    public PoolTimeoutException(String message) {
        super(message, null, false, false);
    }
}
