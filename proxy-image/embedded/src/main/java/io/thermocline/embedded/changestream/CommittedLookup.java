package io.thermocline.embedded.changestream;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The current committed version of a document, for {@code fullDocument: "updateLookup"}: as a
 * server's lookup reads majority-committed data, it never returns an open transaction's write.
 */
@FunctionalInterface
public interface CommittedLookup {

    Optional<BsonDocument> find(String database, String collection, BsonValue id);
}
