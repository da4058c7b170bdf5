package io.thermocline.embedded.storage;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Query cursors over the documents as the query matched them. The storage engine computes a query's whole
 * result at once but keeps references to the stored documents, which later updates change in place: its own
 * cursors would return, in a later batch, a version the query never matched (even one its filter excludes).
 * So a query's result is copied at once, under the store's read lock, and served from here in batches as a
 * server would (first batch 101 documents unless asked otherwise, every batch under 16 MiB).
 * Cursors not used for ten minutes are dropped, as a server times them out.
 */
final class SnapshotCursors {
    static final int DEFAULT_FIRST_BATCH = 101;
    private static final int MAX_BATCH_BYTES = 16 * 1024 * 1024;
    private static final int MAX_OPEN = 10_000;
    private static final long IDLE_NANOS = Duration.ofMinutes(10).toNanos();

    private static final class Open {
        final String namespace;
        final Deque<RawBsonDocument> rest;
        long usedAt = System.nanoTime();

        Open(String namespace, Deque<RawBsonDocument> rest) {
            this.namespace = namespace;
            this.rest = rest;
        }
    }

    private final Map<Long, Open> open = new LinkedHashMap<>();

    /** The first reply to a query whose complete result is {@code documents}; a cursor stays open for the rest. */
    synchronized BsonDocument first(String namespace, List<RawBsonDocument> documents, int batchSize, boolean singleBatch) {
        expire();
        Deque<RawBsonDocument> rest = new ArrayDeque<>(documents);
        BsonArray batch = take(rest, batchSize);
        long id = 0;
        if (!rest.isEmpty() && !singleBatch) {
            id = newId();
            open.put(id, new Open(namespace, rest));
        }
        return reply("firstBatch", batch, id, namespace);
    }

    synchronized boolean owns(long id) {
        return open.containsKey(id);
    }

    /** The next batch of one of these cursors (the caller checked {@link #owns}); batchSize 0 = all that fits. */
    synchronized BsonDocument more(long id, String namespace, int batchSize) {
        Open cursor = open.get(id);
        if (cursor == null) {
            return MemberStore.errorReply(43, "CursorNotFound", "cursor id " + id + " not found");
        }
        if (!cursor.namespace.equals(namespace)) {
            return MemberStore.errorReply(13, "Unauthorized", "Requested getMore on namespace '" + namespace
                + "', but cursor belongs to a different namespace " + cursor.namespace);
        }
        cursor.usedAt = System.nanoTime();
        BsonArray batch = take(cursor.rest, batchSize <= 0 ? Integer.MAX_VALUE : batchSize);
        if (cursor.rest.isEmpty()) {
            open.remove(id);
            id = 0;
        }
        return reply("nextBatch", batch, id, namespace);
    }

    /** Kills those of the ids that are these cursors; returns the ones it killed. */
    synchronized List<Long> kill(List<Long> ids) {
        return ids.stream().filter(id -> open.remove(id) != null).toList();
    }

    private static BsonArray take(Deque<RawBsonDocument> rest, int batchSize) {
        BsonArray batch = new BsonArray();
        long bytes = 0;
        while (!rest.isEmpty() && batch.size() < batchSize) {
            int size = rest.peekFirst().getByteBuffer().remaining();
            if (!batch.isEmpty() && bytes + size > MAX_BATCH_BYTES) {
                break;
            }
            bytes += size;
            batch.add(rest.removeFirst());
        }
        return batch;
    }

    private long newId() {
        long id;
        do {
            id = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        } while (open.containsKey(id));
        return id;
    }

    private void expire() {
        long now = System.nanoTime();
        Iterator<Open> it = open.values().iterator();
        while (it.hasNext()) {
            Open cursor = it.next();
            if (now - cursor.usedAt > IDLE_NANOS || open.size() >= MAX_OPEN) {
                it.remove();
            }
        }
    }

    private static BsonDocument reply(String batchName, BsonArray batch, long id, String namespace) {
        BsonDocument cursor = new BsonDocument(batchName, batch).append("id", new BsonInt64(id))
            .append("ns", new BsonString(namespace));
        return new BsonDocument("cursor", cursor).append("ok", new BsonDouble(1));
    }

    /** The number a find or aggregate asked for in its first batch, the default when it named none. */
    static int firstBatchSize(BsonValue batchSize) {
        return batchSize != null && batchSize.isNumber() ? batchSize.asNumber().intValue() : DEFAULT_FIRST_BATCH;
    }
}
