package io.thermocline.proxy.tiered.writes;

import com.mongodb.MongoWriteConcernException;
import com.mongodb.reactivestreams.client.MongoDatabase;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;

/**
 * The client's write concern waited for on the fast tier when the proxy's answer wrote nothing itself (a write that
 * failed with write errors only, a retry answered from its record): a write that changes nothing, with that write
 * concern. mongod acknowledges a write that changed nothing once its newest write meets the write concern (the
 * client's last op is then the system's), so every write before it does too, the recorded one included.
 */
final class WriteConcernWait {

    private final MongoDatabase thermocline;

    /** Waits on the fast tier's {@code thermocline} database ({@link MetadataStore#database()}). */
    WriteConcernWait(MongoDatabase thermocline) {
        this.thermocline = thermocline;
    }

    /** {@code reply} once the fast tier met {@code wc}, with mongod's {@code writeConcernError} when it did not. */
    BsonDocument after(ClientWriteConcern wc, BsonDocument reply) {
        BsonDocument nothing = new BsonDocument("update", new BsonString(MetadataStore.PROBES))
                .append(
                        "updates",
                        new BsonArray(List.of(new BsonDocument(
                                        "q", new BsonDocument("_id", new BsonString("write-concern-wait")))
                                .append("u", new BsonDocument("$inc", new BsonDocument("n", new BsonInt32(0)))))))
                .append("writeConcern", wc.commit().asDocument());
        try {
            BsonDocument waited = Blocking.single(thermocline.runCommand(nothing, BsonDocument.class))
                    .orElseThrow();
            return ClientWriteConcern.withError(reply, ClientWriteConcern.errorOf(waited, null));
        } catch (MongoWriteConcernException unmet) {
            return ClientWriteConcern.withError(reply, unmet.getWriteConcernError());
        }
    }
}
