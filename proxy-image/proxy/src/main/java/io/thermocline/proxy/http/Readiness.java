package io.thermocline.proxy.http;

/** Whether a process can do its work now, and if not, why (shown by {@code /health/live} and {@code /health/ready}). */
public record Readiness(boolean ready, String reason) {

    public static final Readiness YES = new Readiness(true, "");

    public static Readiness not(String reason) {
        return new Readiness(false, reason);
    }
}
