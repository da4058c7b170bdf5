package io.thermocline.proxy.routing;

/** Who serves a command that is not a tiered read or write. */
public enum Destination {
    /** The proxy answers itself (handshake, ping, authentication). */
    PROXY,
    /** The archive, unchanged: it is the cluster the application believes it talks to. */
    ARCHIVE,
    /** Both tiers, e.g. ending sessions that may exist on either. */
    BOTH_TIERS
}
