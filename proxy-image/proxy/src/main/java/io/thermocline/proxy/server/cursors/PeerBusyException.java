package io.thermocline.proxy.server.cursors;

/**
 * The command could not be sent to its owner now (every peer connection stayed busy, or the link
 * closed): it never reached the owner, so retrying it is safe. Clients see HostUnreachable (6).
 */
public final class PeerBusyException extends RuntimeException {
    public PeerBusyException(String message) {
        super(message, null, false, false);
    }
}
