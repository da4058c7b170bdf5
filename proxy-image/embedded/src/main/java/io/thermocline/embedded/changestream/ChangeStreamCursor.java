package io.thermocline.embedded.changestream;

import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.NoopOplog;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.oplog.OplogEntry;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.storage.BsonBridge;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * One open change stream on one member. Reads the oplog by position (never rescanning it) up to
 * what a majority has applied, renders events in the server's shapes, applies the stages that
 * follow $changeStream, and waits on the progress signal when there is nothing new.
 */
public final class ChangeStreamCursor {
    private static final int SCAN_CHUNK = 1_000;

    /** A batch of events and the token to resume after it. */
    public record Batch(List<BsonDocument> events, BsonDocument postBatchResumeToken, boolean exhausted) {}

    private final long id;
    private final ChangeStreamScope scope;
    private final ChangeStreamOptions options;
    private final Aggregation stages;
    private final MemberState member;
    private final ReplicationCoordinator coordinator;
    private final CommittedLookup lookup;
    private OplogPosition position;
    private ResumeToken lastEventToken;
    private boolean invalidated;
    private volatile boolean closed;
    private volatile long lastUsedMillis = System.currentTimeMillis();

    public ChangeStreamCursor(
            long id,
            ChangeStreamScope scope,
            ChangeStreamOptions options,
            List<BsonDocument> postStages,
            MemberState member,
            ReplicationCoordinator coordinator,
            CommittedLookup lookup) {
        this.id = id;
        this.lookup = lookup;
        this.scope = scope;
        this.options = options;
        this.member = member;
        this.coordinator = coordinator;
        this.stages = postStages.isEmpty() ? null : compile(postStages);
        this.position = startPosition();
        checkHistory();
    }

    private static Aggregation compile(List<BsonDocument> postStages) {
        List<Document> pipeline = new ArrayList<>();
        for (BsonDocument stage : postStages) {
            String name = stage.getFirstKey();
            BsonDocument translated = switch (name) {
                case "$set" -> new BsonDocument("$addFields", stage.get(name));
                case "$replaceWith" -> new BsonDocument("$replaceRoot", new BsonDocument("newRoot", stage.get(name)));
                case "$match", "$project", "$addFields", "$replaceRoot", "$unset", "$redact" -> stage;
                default ->
                    throw new ReplicationException(
                            ErrorCodes.ILLEGAL_OPERATION,
                            "IllegalOperation",
                            name + " is not permitted in a $changeStream pipeline");
            };
            pipeline.add(BsonBridge.toBackend(translated));
        }
        return Aggregation.fromPipeline(pipeline, null, null, null, NoopOplog.get());
    }

    private OplogPosition startPosition() {
        if (options.startAfter() != null) {
            return options.startAfter().position();
        }
        if (options.resumeAfter() != null) {
            if (options.resumeAfter().kind() == ResumeToken.Kind.INVALIDATE) {
                throw new ReplicationException(
                        260,
                        "InvalidResumeToken",
                        "Attempting to resume a change stream using 'resumeAfter' is not allowed from an invalidate notification; use 'startAfter'");
            }
            return options.resumeAfter().position();
        }
        if (options.startAtOperationTime() != null) {
            return new OplogPosition(options.startAtOperationTime().getValue(), -1);
        }
        // The member's applied position, not the oplog's end: a transaction being appended is not half-seen.
        return member.applied();
    }

    private void checkHistory() {
        if (coordinator.oplog().trimmedThrough().isAfter(position)) {
            throw new ReplicationException(
                    286,
                    "ChangeStreamHistoryLost",
                    "Resume of change stream was not possible, as the resume point may no longer be in the oplog.");
        }
    }

    public long id() {
        return id;
    }

    public String namespace() {
        return scope.cursorNamespace();
    }

    public MemberState member() {
        return member;
    }

    public long maxAwaitDefaultMillis() {
        return 1_000;
    }

    public long lastUsedMillis() {
        return lastUsedMillis;
    }

    /** A batch without scanning (batchSize 0 on the opening aggregate). */
    public synchronized Batch empty() {
        return new Batch(List.of(), new ResumeToken(position, ResumeToken.Kind.HIGH_WATER_MARK).toBson(), false);
    }

    public void close() {
        closed = true;
        coordinator.progress().signalAll();
    }

    private OplogPosition readableLimit() {
        OplogPosition majority = coordinator.commitPoint().majorityCommitted();
        OplogPosition applied = member.applied();
        return majority.compareTo(applied) < 0 ? majority : applied;
    }

    /** The next batch: returns as soon as there are events, or after maxAwaitMillis without any. */
    public synchronized Batch next(int batchSize, long maxAwaitMillis) {
        lastUsedMillis = System.currentTimeMillis();
        int limit = batchSize <= 0 ? 101 : batchSize;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxAwaitMillis);
        List<BsonDocument> events = new ArrayList<>();
        while (!closed) {
            checkHistory();
            OplogPosition upTo = readableLimit();
            List<OplogEntry> entries = coordinator.oplog().after(position, upTo, SCAN_CHUNK);
            for (OplogEntry entry : entries) {
                if (events.size() >= limit || invalidated) {
                    break;
                }
                position = entry.position();
                if (scope.covers(entry)) {
                    render(entry, events);
                }
            }
            if (!events.isEmpty() || invalidated) {
                break;
            }
            if (entries.size() == SCAN_CHUNK) {
                continue;
            }
            if (upTo.isAfter(position)) {
                position = upTo;
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                break;
            }
            OplogPosition seen = position;
            coordinator
                    .progress()
                    .await(() -> closed || readableLimit().isAfter(seen), remaining, TimeUnit.NANOSECONDS);
        }
        BsonDocument pbrt = lastEventToken != null && lastEventToken.position().equals(position)
                ? lastEventToken.toBson()
                : new ResumeToken(position, ResumeToken.Kind.HIGH_WATER_MARK).toBson();
        return new Batch(events, pbrt, invalidated || closed);
    }

    private void render(OplogEntry entry, List<BsonDocument> out) {
        emit(event(entry, new ResumeToken(entry.position(), ResumeToken.Kind.EVENT)), entry, out);
        boolean ends = switch (entry.operation()) {
            case DROP, RENAME -> scope instanceof ChangeStreamScope.Collection;
            case DROP_DATABASE -> scope instanceof ChangeStreamScope.Database;
            default -> false;
        };
        if (ends) {
            ResumeToken token = new ResumeToken(entry.position(), ResumeToken.Kind.INVALIDATE);
            BsonDocument invalidate = new BsonDocument("_id", token.toBson())
                    .append("operationType", new BsonString("invalidate"))
                    .append("clusterTime", entry.clusterTime())
                    .append("wallTime", new BsonDateTime(entry.wallTimeMillis()));
            emit(invalidate, entry, out);
            invalidated = true;
        }
    }

    private void emit(BsonDocument event, OplogEntry entry, List<BsonDocument> out) {
        if (stages == null
                || "invalidate".equals(event.getString("operationType").getValue())) {
            checkSize(event);
            out.add(event);
            lastEventToken = ResumeToken.parse(event.get("_id"));
            return;
        }
        List<Document> result = stages.runStages(Stream.of(toBackend(event)));
        if (result.isEmpty()) {
            return;
        }
        BsonDocument transformed = BsonBridge.fromBackend(result.get(0));
        BsonValue id = transformed.get("_id");
        if (id == null || !id.equals(event.get("_id"))) {
            throw new ReplicationException(
                    280,
                    "ChangeStreamFatalError",
                    "Encountered an event whose _id field, which contains the resume token, was modified by the pipeline. "
                            + "Modifying the _id field of an event makes it impossible to resume the stream from that point. "
                            + "Only transformations that retain the unmodified _id field are allowed.");
        }
        checkSize(transformed);
        out.add(transformed);
        lastEventToken = ResumeToken.parse(id);
    }

    /**
     * The backend's decoder refuses documents over 16 MB, while MongoDB runs the stages after
     * $changeStream on events of any size (only the output is limited): decode field by field.
     */
    private static Document toBackend(BsonDocument event) {
        if (new RawBsonDocument(event, new BsonDocumentCodec()).getByteBuffer().remaining() <= 16 * 1024 * 1024) {
            return BsonBridge.toBackend(event);
        }
        Document document = new Document();
        for (var field : event.entrySet()) {
            document.putAll(BsonBridge.toBackend(new BsonDocument(field.getKey(), field.getValue())));
        }
        return document;
    }

    /**
     * MongoDB fails the stream when one event, after the stages that follow $changeStream, exceeds
     * its internal BSON limit (16 MB + 16 KB): resuming meets the same event again.
     */
    private static void checkSize(BsonDocument event) {
        int size = new RawBsonDocument(event, new BsonDocumentCodec())
                .getByteBuffer()
                .remaining();
        if (size > MAX_EVENT_BYTES) {
            throw new ReplicationException(
                    10334,
                    "BSONObjectTooLarge",
                    "Executor error during getMore :: caused by :: BSONObj size: " + size + " (0x"
                            + Integer.toHexString(size).toUpperCase()
                            + ") is invalid. Size must be between 0 and 16793600(16MB)");
        }
    }

    private static final int MAX_EVENT_BYTES = 16 * 1024 * 1024 + 16 * 1024;

    private BsonDocument event(OplogEntry entry, ResumeToken token) {
        BsonDocument event = new BsonDocument("_id", token.toBson());
        String type = switch (entry.operation()) {
            case INSERT -> "insert";
            case UPDATE -> "update";
            case REPLACE -> "replace";
            case DELETE -> "delete";
            case DROP -> "drop";
            case DROP_DATABASE -> "dropDatabase";
            case RENAME -> "rename";
            case COMMAND -> throw new IllegalStateException("commands are not change events");
        };
        event.append("operationType", new BsonString(type));
        event.append("clusterTime", new BsonTimestamp(entry.position().timestamp()));
        event.append("wallTime", new BsonDateTime(entry.wallTimeMillis()));
        BsonValue fullDocument = fullDocument(entry);
        if (fullDocument != null) {
            event.append("fullDocument", fullDocument);
        }
        BsonDocument ns = new BsonDocument("db", new BsonString(entry.database()));
        if (entry.collection() != null) {
            ns.append("coll", new BsonString(entry.collection()));
        }
        event.append("ns", ns);
        if (entry.operation() == Operation.RENAME) {
            String to = entry.document().getString("to").getValue();
            int dot = to.indexOf('.');
            event.append(
                    "to",
                    new BsonDocument("db", new BsonString(to.substring(0, dot)))
                            .append("coll", new BsonString(to.substring(dot + 1))));
        }
        if (entry.documentKey() != null) {
            event.append("documentKey", entry.documentKey());
        }
        if (entry.operation() == Operation.UPDATE) {
            event.append("updateDescription", entry.updateDescription());
        }
        if (entry.inTransaction()) {
            event.append("lsid", entry.lsid());
            event.append("txnNumber", new BsonInt64(entry.txnNumber()));
        }
        return event;
    }

    private BsonValue fullDocument(OplogEntry entry) {
        return switch (entry.operation()) {
            case INSERT, REPLACE -> entry.document();
            case UPDATE ->
                switch (options.fullDocument()) {
                    case "updateLookup" ->
                        lookup.find(
                                        entry.database(),
                                        entry.collection(),
                                        entry.documentKey().get("_id"))
                                .<BsonValue>map(d -> d)
                                .orElse(BsonNull.VALUE);
                    case "whenAvailable", "required" -> entry.document();
                    default -> null;
                };
            default -> null;
        };
    }
}
