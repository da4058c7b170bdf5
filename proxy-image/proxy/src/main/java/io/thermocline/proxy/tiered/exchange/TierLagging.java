package io.thermocline.proxy.tiered.exchange;

/**
 * A tiered operation needed the feeder to catch up (a promotion's sync barrier) and it did not in
 * time: the client gets a retryable error, and nothing half-done is visible (a promotion only copies).
 */
public final class TierLagging extends RuntimeException {
    public TierLagging(String message) {
        super(message);
    }
}
