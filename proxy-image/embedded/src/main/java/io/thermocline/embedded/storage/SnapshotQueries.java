package io.thermocline.embedded.storage;

import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * A member's queries as a server answers them, over an engine that does not: each find or aggregate has its whole
 * result copied under the collection's read lock ({@link StoreLocks}) and is served in batches from a
 * {@link SnapshotCursors} cursor, whose getMore and killCursors are answered here too.
 */
final class SnapshotQueries {

    /** The storage engine's own answer to a command, for a client's channel (null: the store's own). */
    @FunctionalInterface
    interface Engine {
        BsonDocument run(Channel channel, String database, BsonDocument command);
    }

    /** The member's own find through the {@code _id} index ({@link IdIndexScan}), at most {@code limit} (0: all). */
    @FunctionalInterface
    interface IdFind {
        List<RawBsonDocument> find(String database, String collection, BsonDocument filter, int limit);
    }

    /** A find answered by walking a secondary index ({@link SecondaryIndexScan}); empty when the engine answers it. */
    @FunctionalInterface
    interface IndexedFind {
        Optional<List<RawBsonDocument>> find(String database, BsonDocument command);
    }

    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private final Engine engine;
    private final IdFind idFind;
    private final IndexedFind indexedFind;
    private final StoreLocks locks;
    private final SnapshotCursors cursors = new SnapshotCursors();

    SnapshotQueries(Engine engine, IdFind idFind, IndexedFind indexedFind, StoreLocks locks) {
        this.engine = engine;
        this.idFind = idFind;
        this.indexedFind = indexedFind;
        this.locks = locks;
    }

    /** A find or aggregate: its whole result copied under the read lock, then served in batches from a snapshot cursor. */
    BsonDocument query(Channel channel, String database, String name, BsonDocument command) {
        BsonValue requested = name.equals("find")
                ? command.get("batchSize")
                : command.getDocument("cursor", new BsonDocument()).get("batchSize");
        if (requested != null && (!requested.isNumber() || requested.asNumber().intValue() < 0)) {
            // the engine's own error
            return locks.reading(database, command, () -> engine.run(channel, database, command));
        }
        boolean singleBatch = command.get("singleBatch") instanceof BsonBoolean b && b.getValue();
        Optional<IdIndexScan.PlainFind> byId = name.equals("find") ? IdIndexScan.plainFind(command) : Optional.empty();
        if (byId.isPresent()) {
            IdIndexScan.PlainFind plain = byId.get();
            List<RawBsonDocument> found = idFind.find(database, plain.collection(), plain.filter(), plain.limit());
            return cursors.first(
                    database + "." + plain.collection(), found, SnapshotCursors.firstBatchSize(requested), singleBatch);
        }
        Optional<List<RawBsonDocument>> walked =
                name.equals("find") ? indexedFind.find(database, command) : Optional.empty();
        if (walked.isPresent()) {
            return cursors.first(
                    database + "." + command.getString("find").getValue(),
                    walked.get(),
                    SnapshotCursors.firstBatchSize(requested),
                    singleBatch);
        }
        List<RawBsonDocument> documents = new ArrayList<>();
        String[] namespace = {
            database + "."
                    + (command.get(command.getFirstKey()) instanceof BsonString s ? s.getValue() : "$cmd.aggregate")
        };
        // the engine computes the whole result anyway: asked for it in one batch, and drained below if it pages
        BsonDocument whole = BsonBridge.mutable(command);
        whole.remove("singleBatch");
        if (name.equals("find")) {
            whole.put("batchSize", new BsonInt32(Integer.MAX_VALUE));
        } else {
            // the engine answers an aggregate in one batch (and warns of any batchSize)
            whole.put("cursor", new BsonDocument());
        }
        BsonDocument error = locks.reading(database, command, () -> {
            BsonDocument reply = engine.run(channel, database, whole);
            while (true) {
                if (!reply.containsKey("cursor") || reply.get("ok").asNumber().intValue() != 1) {
                    return reply; // an error, or an explain: nothing to serve in batches
                }
                BsonDocument cursor = reply.getDocument("cursor");
                BsonValue batch = cursor.containsKey("firstBatch") ? cursor.get("firstBatch") : cursor.get("nextBatch");
                batch.asArray()
                        .forEach(d -> documents.add(
                                d instanceof RawBsonDocument raw ? raw : new RawBsonDocument(d.asDocument(), CODEC)));
                namespace[0] =
                        cursor.getString("ns", new BsonString(namespace[0])).getValue();
                long id = cursor.getNumber("id").longValue();
                if (id == 0) {
                    return null;
                }
                String coll = namespace[0].substring(namespace[0].indexOf('.') + 1);
                reply = engine.run(
                        channel,
                        database,
                        new BsonDocument("getMore", new BsonInt64(id))
                                .append("collection", new BsonString(coll))
                                .append("batchSize", new BsonInt32(Integer.MAX_VALUE)));
            }
        });
        if (error != null) {
            return error;
        }
        return cursors.first(namespace[0], documents, SnapshotCursors.firstBatchSize(requested), singleBatch);
    }

    /** A getMore of a cursor served from here; empty for the engine's own cursors. */
    Optional<BsonDocument> more(String database, BsonDocument command) {
        long id = command.get("getMore").isNumber()
                ? command.get("getMore").asNumber().longValue()
                : 0;
        if (!cursors.owns(id)) {
            return Optional.empty();
        }
        String coll = command.get("collection") instanceof BsonString s ? s.getValue() : "";
        int batchSize =
                command.get("batchSize") != null && command.get("batchSize").isNumber()
                        ? command.get("batchSize").asNumber().intValue()
                        : 0;
        return Optional.of(cursors.more(id, database + "." + coll, batchSize));
    }

    BsonDocument killCursors(Channel channel, String database, BsonDocument command) {
        List<Long> ids = new ArrayList<>();
        command.getArray("cursors", new BsonArray()).stream()
                .filter(BsonValue::isNumber)
                .forEach(v -> ids.add(v.asNumber().longValue()));
        List<Long> killed = cursors.kill(ids);
        BsonArray others = new BsonArray();
        ids.stream().filter(id -> !killed.contains(id)).forEach(id -> others.add(new BsonInt64(id)));
        BsonArray cursorsKilled = new BsonArray();
        killed.forEach(id -> cursorsKilled.add(new BsonInt64(id)));
        BsonArray notFound = new BsonArray();
        if (!others.isEmpty()) {
            BsonDocument reply = locks.reading(
                    database,
                    command,
                    () -> engine.run(
                            channel,
                            database,
                            new BsonDocument("killCursors", command.get(command.getFirstKey()))
                                    .append("cursors", others)));
            cursorsKilled.addAll(reply.getArray("cursorsKilled", new BsonArray()));
            notFound.addAll(reply.getArray("cursorsNotFound", others));
        }
        return new BsonDocument("cursorsKilled", cursorsKilled)
                .append("cursorsNotFound", notFound)
                .append("cursorsAlive", new BsonArray())
                .append("cursorsUnknown", new BsonArray())
                .append("ok", new BsonDouble(1));
    }
}
