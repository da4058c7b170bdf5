package io.thermocline.embedded.write;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.oplog.UpdateDescriptions;
import io.thermocline.embedded.storage.MemberStore;
import java.util.Optional;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/** Reports a document a write inserted or modified to the sink, its post-image read back from storage. */
final class ChangeRecorder {
    private final MemberStore store;
    private final Consumer<Change> sink;

    ChangeRecorder(MemberStore store, Consumer<Change> sink) {
        this.store = store;
        this.sink = sink;
    }

    void recordInsert(String db, String coll, BsonValue id) {
        store.findById(db, coll, id)
                .ifPresent(post -> sink.accept(new Change(Operation.INSERT, db, coll, key(id), post, null, null)));
    }

    void recordModification(String db, String coll, RawBsonDocument pre, boolean replacement) {
        BsonValue id = pre.get("_id");
        Optional<RawBsonDocument> post = store.findById(db, coll, id);
        if (post.isEmpty() || post.get().equals(pre)) {
            return;
        }
        if (replacement) {
            sink.accept(new Change(Operation.REPLACE, db, coll, key(id), post.get(), null, pre));
        } else {
            sink.accept(new Change(
                    Operation.UPDATE, db, coll, key(id), post.get(), UpdateDescriptions.diff(pre, post.get()), pre));
        }
    }

    static boolean isReplacement(BsonValue update) {
        if (update == null || !update.isDocument()) {
            return false;
        }
        BsonDocument u = update.asDocument();
        return u.isEmpty() || !u.getFirstKey().startsWith("$");
    }

    static BsonDocument key(BsonValue id) {
        return new BsonDocument("_id", id);
    }
}
