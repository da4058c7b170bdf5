package io.thermocline.proxy.session;

import java.time.Duration;
import org.bson.BsonValue;

/** A logical session as the proxy indexes it: the {@code id} of the client's {@code lsid}. */
public record SessionKey(BsonValue id) {

    /**
     * MongoDB's default {@code logicalSessionTimeoutMinutes}: a session unused this long is gone on the
     * servers (its transaction aborted), so what the proxy remembers of it may go too.
     */
    public static final Duration TIMEOUT = Duration.ofMinutes(30);
}
