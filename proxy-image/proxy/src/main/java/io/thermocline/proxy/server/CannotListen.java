package io.thermocline.proxy.server;

import java.io.IOException;

/**
 * A port the proxy could not bind, named with its purpose: "port in use" alone does not say which of
 * the client, HTTP and peer ports to change.
 */
public final class CannotListen extends IOException {

    private final int port;

    public CannotListen(String purpose, String host, int port, Throwable cause) {
        super("cannot listen on " + host + ":" + port + " (" + purpose + "): " + cause.getMessage()
                + (String.valueOf(cause.getMessage()).contains("in use")
                        ? "; port " + port + " is in use: stop what uses it or choose another port"
                        : ""), cause);
        this.port = port;
    }

    public int port() {
        return port;
    }

    /** Netty's native transports report a taken port as their own IOException, thrown unchecked by sync(). */
    static boolean isBindFailure(Throwable t) {
        return t instanceof IOException;
    }
}
