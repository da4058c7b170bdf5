package io.thermocline.proxy.session;

import org.bson.BsonValue;

/** A logical session as the proxy indexes it: the {@code id} of the client's {@code lsid}. */
public record SessionKey(BsonValue id) {
}
