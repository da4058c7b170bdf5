package io.thermocline.proxy.tiered;

import io.thermocline.wire.OpMsg;

/** One client command the dispatcher offers to the tiered layer, with the connection it came on. */
public record TieredRequest(long connectionId, OpMsg msg) {
}
