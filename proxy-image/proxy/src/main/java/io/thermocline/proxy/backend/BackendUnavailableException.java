package io.thermocline.proxy.backend;

/**
 * A backend member could not be reached, dropped the connection mid-request, or no member can
 * serve the request right now. The client sees a retryable error (HostUnreachable).
 *
 * @param requestSent whether the request may have reached the backend (matters for labels:
 *                    a commit that may have been applied has an unknown result)
 */
public final class BackendUnavailableException extends RuntimeException {
    private final boolean requestSent;

    public BackendUnavailableException(String message, boolean requestSent) {
        super(message, null, false, false);
        this.requestSent = requestSent;
    }

    public boolean requestSent() {
        return requestSent;
    }
}
