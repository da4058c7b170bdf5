package io.thermocline.embedded.changestream;

import io.thermocline.embedded.replication.ReplicationException;
import java.util.Set;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonTimestamp;

/** The $changeStream stage's options, validated as the server does. */
public record ChangeStreamOptions(String fullDocument, ResumeToken resumeAfter, ResumeToken startAfter,
                                  BsonTimestamp startAtOperationTime, boolean allChangesForCluster) {
    private static final Set<String> FULL_DOCUMENT = Set.of("default", "updateLookup", "whenAvailable", "required");

    public static ChangeStreamOptions parse(BsonDocument spec) {
        String fullDocument = spec.getString("fullDocument", new BsonString("default")).getValue();
        if (!FULL_DOCUMENT.contains(fullDocument)) {
            throw new ReplicationException(ErrorCodes.BAD_VALUE, "BadValue", "unknown fullDocument mode '" + fullDocument
                + "'; use one of " + FULL_DOCUMENT);
        }
        ResumeToken resumeAfter = spec.containsKey("resumeAfter") ? ResumeToken.parse(spec.get("resumeAfter")) : null;
        ResumeToken startAfter = spec.containsKey("startAfter") ? ResumeToken.parse(spec.get("startAfter")) : null;
        BsonTimestamp startAt = spec.containsKey("startAtOperationTime") ? spec.getTimestamp("startAtOperationTime") : null;
        int starts = (resumeAfter != null ? 1 : 0) + (startAfter != null ? 1 : 0) + (startAt != null ? 1 : 0);
        if (starts > 1) {
            throw new ReplicationException(40674, "Location40674",
                "Only one type of resume option is allowed, but multiple were found.");
        }
        return new ChangeStreamOptions(fullDocument, resumeAfter, startAfter, startAt,
            spec.getBoolean("allChangesForCluster", BsonBoolean.FALSE).getValue());
    }
}
