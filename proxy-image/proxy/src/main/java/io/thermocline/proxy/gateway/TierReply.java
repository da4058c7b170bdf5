package io.thermocline.proxy.gateway;

import org.bson.RawBsonDocument;

/** A tier member's reply as the client may see it (cursor ids are the proxy's), and whether it succeeded. */
public record TierReply(RawBsonDocument body, boolean ok) {}
