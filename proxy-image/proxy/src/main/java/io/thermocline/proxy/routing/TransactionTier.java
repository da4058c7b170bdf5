package io.thermocline.proxy.routing;

/** The one replica set a multi-statement transaction runs on. */
public enum TransactionTier {
    FAST,
    ARCHIVE
}
