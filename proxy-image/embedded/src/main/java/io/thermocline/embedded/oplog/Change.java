package io.thermocline.embedded.oplog;

import org.bson.BsonDocument;

/**
 * A write observed on the primary, before it is stamped into the oplog. preImage (null when the
 * document did not exist) lets a transaction undo it on abort.
 */
public record Change(Operation operation, String database, String collection, BsonDocument documentKey,
                     BsonDocument document, BsonDocument updateDescription, BsonDocument preImage) {
}
