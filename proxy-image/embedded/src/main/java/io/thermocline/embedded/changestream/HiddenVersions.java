package io.thermocline.embedded.changestream;

import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The committed versions of documents whose storage state is not (yet) committed, by {@code _id}:
 * writes of open transactions, and writes a majority has not applied. A null value means the
 * document did not exist in the committed view. {@code updateLookup} must read through this, as a
 * real server's lookup reads majority-committed data and never another transaction's writes.
 */
@FunctionalInterface
public interface HiddenVersions {

    HiddenVersions NONE = (database, collection) -> Map.of();

    Map<BsonValue, BsonDocument> of(String database, String collection);
}
