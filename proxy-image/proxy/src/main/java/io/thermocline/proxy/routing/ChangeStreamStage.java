package io.thermocline.proxy.routing;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The {@code $changeStream} stage that opens a pipeline, read in one place for the three that ask: the routing
 * ({@link PipelineRouter}), the authorization of the stream, and the tiered stream filter.
 */
public final class ChangeStreamStage {

    private ChangeStreamStage() {}

    /**
     * The value of the {@code $changeStream} stage when {@code pipeline} is an array whose first stage is a document
     * naming it; null otherwise (no pipeline, an empty one, or another first stage).
     */
    public static BsonValue options(BsonValue pipeline) {
        if (!(pipeline instanceof BsonArray stages)
                || stages.isEmpty()
                || !(stages.get(0) instanceof BsonDocument first)) {
            return null;
        }
        return first.get("$changeStream");
    }
}
