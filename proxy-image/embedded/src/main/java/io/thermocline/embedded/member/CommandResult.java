package io.thermocline.embedded.member;

import org.bson.BsonDocument;
import org.bson.BsonTimestamp;

/** A command's reply and the operationTime it reports; the dispatcher adds both times to the reply. */
record CommandResult(BsonDocument reply, BsonTimestamp operationTime) {}
