package io.thermocline.embedded.changestream;

import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/** One member's open change streams: opening ($changeStream aggregate), getMore, killCursors, idle timeout. */
public final class ChangeStreamCursors {
    private static final Duration CURSOR_TIMEOUT = Duration.ofMinutes(10);

    private final ReplicationCoordinator coordinator;
    private final MemberState member;
    private final CommittedLookup lookup;
    private final Map<Long, ChangeStreamCursor> cursors = new ConcurrentHashMap<>();

    public ChangeStreamCursors(ReplicationCoordinator coordinator, MemberState member, CommittedLookup lookup) {
        this.coordinator = coordinator;
        this.member = member;
        this.lookup = lookup;
    }

    public static boolean isChangeStream(BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        return pipeline != null && pipeline.isArray() && !pipeline.asArray().isEmpty()
            && pipeline.asArray().get(0).isDocument() && pipeline.asArray().get(0).asDocument().containsKey("$changeStream");
    }

    /** Opens a stream from an aggregate whose first stage is $changeStream; returns the first batch. */
    public BsonDocument open(String db, BsonDocument command) {
        BsonArray pipeline = command.getArray("pipeline");
        ChangeStreamOptions options = ChangeStreamOptions.parse(pipeline.get(0).asDocument().getDocument("$changeStream"));
        ChangeStreamScope scope = scope(db, command.get("aggregate"), options);
        List<BsonDocument> rest = new ArrayList<>();
        for (int i = 1; i < pipeline.size(); i++) {
            rest.add(pipeline.get(i).asDocument());
        }
        long id = ThreadLocalRandom.current().nextLong(1L << 40, Long.MAX_VALUE);
        ChangeStreamCursor cursor = new ChangeStreamCursor(id, scope, options, rest, member, coordinator, lookup);
        int batchSize = command.getDocument("cursor", new BsonDocument()).getNumber("batchSize", new BsonInt32(101)).intValue();
        ChangeStreamCursor.Batch batch = batchSize == 0 ? cursor.empty() : cursor.next(batchSize, 0);
        reapIdle();
        if (!batch.exhausted()) {
            cursors.put(id, cursor);
        }
        return reply("firstBatch", batch, batch.exhausted() ? 0 : id, cursor.namespace());
    }

    private static ChangeStreamScope scope(String db, BsonValue target, ChangeStreamOptions options) {
        if (target.isString()) {
            return new ChangeStreamScope.Collection(db, target.asString().getValue());
        }
        if (options.allChangesForCluster()) {
            if (!"admin".equals(db)) {
                throw new ReplicationException(40573, "Location40573",
                    "$changeStream may only be run with allChangesForCluster on the admin database");
            }
            return new ChangeStreamScope.Cluster();
        }
        if (ChangeStreamScope.INTERNAL_DATABASES.contains(db)) {
            throw new ReplicationException(73, "InvalidNamespace", "$changeStream may not be opened on the internal " + db + " database");
        }
        return new ChangeStreamScope.Database(db);
    }

    /** The next batch when the cursor is a change stream of this member; empty for other cursors. */
    public Optional<BsonDocument> getMore(BsonDocument command) {
        long id = command.getNumber("getMore").longValue();
        ChangeStreamCursor cursor = cursors.get(id);
        if (cursor == null) {
            return Optional.empty();
        }
        int batchSize = command.getNumber("batchSize", new BsonInt32(101)).intValue();
        long maxAwait = command.getNumber("maxTimeMS", new BsonInt64(cursor.maxAwaitDefaultMillis())).longValue();
        ChangeStreamCursor.Batch batch = cursor.next(batchSize, maxAwait);
        if (batch.exhausted()) {
            cursors.remove(id);
        }
        return Optional.of(reply("nextBatch", batch, batch.exhausted() ? 0 : id, cursor.namespace()));
    }

    /** Closes a change stream of this member; false when the id is not one. */
    public boolean kill(long id) {
        ChangeStreamCursor cursor = cursors.remove(id);
        if (cursor == null) {
            return false;
        }
        cursor.close();
        return true;
    }

    public void closeAll() {
        cursors.values().forEach(ChangeStreamCursor::close);
        cursors.clear();
    }

    /** Streams nobody asked for in 10 minutes are closed, as the server times cursors out. */
    private void reapIdle() {
        long cutoff = System.currentTimeMillis() - CURSOR_TIMEOUT.toMillis();
        cursors.values().removeIf(c -> {
            if (c.lastUsedMillis() < cutoff) {
                c.close();
                return true;
            }
            return false;
        });
    }

    private static BsonDocument reply(String batchName, ChangeStreamCursor.Batch batch, long id, String ns) {
        return new BsonDocument("cursor", new BsonDocument(batchName, new BsonArray(new ArrayList<>(batch.events())))
            .append("postBatchResumeToken", batch.postBatchResumeToken())
            .append("id", new BsonInt64(id))
            .append("ns", new BsonString(ns)))
            .append("ok", new BsonDouble(1));
    }
}
