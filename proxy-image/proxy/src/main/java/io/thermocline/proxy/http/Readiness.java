package io.thermocline.proxy.http;

/** Whether the proxy can serve traffic now, and if not, why (shown by {@code /health/ready}). */
public record Readiness(boolean ready, String reason) {
}
