package io.thermocline.proxy.session;

import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.util.Optional;

/** A logical session as the proxy indexes it: the {@code id} of the client's {@code lsid}. */
public record SessionKey(BsonValue id) {

    public static Optional<SessionKey> of(BsonDocument command) {
        BsonValue lsid = command.get("lsid");
        if (lsid == null || !lsid.isDocument()) {
            return Optional.empty();
        }
        BsonValue id = lsid.asDocument().get("id");
        return id == null ? Optional.empty() : Optional.of(new SessionKey(id));
    }
}
