package io.thermocline.proxy.tiered.exchange;

import org.bson.RawBsonDocument;

/** A claimed command's work on the tiers: it may wait (causal point, sync barrier, promotion), so it runs off the network threads. */
@FunctionalInterface
public interface TierWork {
    RawBsonDocument run() throws InterruptedException;
}
