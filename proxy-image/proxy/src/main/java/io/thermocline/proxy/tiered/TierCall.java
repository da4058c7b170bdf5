package io.thermocline.proxy.tiered;

import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.OpMsg;
import java.util.concurrent.CompletableFuture;
import org.bson.RawBsonDocument;

/**
 * The dispatcher's path to one tier: sends a client command (possibly rewritten) to the member of
 * {@code tier} that must serve it (transaction pin, primary), translating mongos-only fields and
 * cluster times, and returns the reply with backend cursor ids replaced by proxy cursor ids that
 * remember the tier, so getMore and killCursors keep working.
 */
@FunctionalInterface
public interface TierCall {
    CompletableFuture<RawBsonDocument> call(Tier tier, OpMsg request);
}
