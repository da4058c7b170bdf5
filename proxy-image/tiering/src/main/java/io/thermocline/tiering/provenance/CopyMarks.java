package io.thermocline.tiering.provenance;

import com.mongodb.client.model.Filters;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.reactive.Blocking;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * Marks the copy-ups a user-visible fast-tier transaction makes (the archived version of a cold document
 * inserted before the user's update or delete runs on it), so that application change streams can leave
 * their {@code insert} events out: one database would show only the user's own event. A mark is a document
 * inserted into {@code thermocline.copies} and removed again in the same transaction: nothing stays, but its
 * insert event carries the transaction's {@code lsid}, {@code txnNumber} and commit cluster time with the
 * copied ids. Unlike the provenance marker ({@link OwnWrites}) it leaves the transaction a user's, so the
 * feeder still mirrors it (it does not watch this collection).
 *
 * <p>{@code whole}: every insert of a marked document in the transaction is a copy (the proxy's own guarded
 * transactions: the copies come first and the user's command never inserts a document that exists). In an
 * application's transaction only the first event of a marked document is its copy: the application may
 * delete it and insert it again later in the same transaction.
 */
public final class CopyMarks {

    /** A copied document as change events name it. */
    public record Copied(String namespace, BsonValue id) {
    }

    /** What the marks of one transaction say. */
    public record Mark(Set<Copied> copied, boolean whole) {
        public Mark {
            copied = Set.copyOf(copied);
        }

        public Mark merge(Mark other) {
            Set<Copied> all = new LinkedHashSet<>(copied);
            all.addAll(other.copied);
            return new Mark(all, whole && other.whole);
        }
    }

    private final MongoCollection<BsonDocument> marks;

    public CopyMarks(MetadataStore store) {
        this.marks = store.collection(MetadataStore.COPIES);
    }

    /** Marks {@code ids} of {@code namespace} as copied in the (proxy's own guarded) transaction of {@code session}. */
    public void mark(ClientSession session, String namespace, List<BsonValue> ids) {
        if (ids.isEmpty()) {
            return;
        }
        BsonDocument mark = document(namespace, ids, true);
        Blocking.run(marks.insertOne(session, mark));
        Blocking.run(marks.deleteOne(session, Filters.eq("_id", mark.get("_id"))));
    }

    /** The same mark as commands ({@link MetadataStore#DATABASE}, no session fields) for an application's transaction. */
    public static List<BsonDocument> markCommands(String namespace, List<BsonValue> ids) {
        BsonDocument mark = document(namespace, ids, false);
        return List.of(
                new BsonDocument("insert", new BsonString(MetadataStore.COPIES)).append("documents", new BsonArray(List.of(mark))),
                new BsonDocument("delete", new BsonString(MetadataStore.COPIES)).append("deletes", new BsonArray(List.of(
                        new BsonDocument("q", new BsonDocument("_id", mark.get("_id"))).append("limit", new BsonInt32(1))))));
    }

    private static BsonDocument document(String namespace, List<BsonValue> ids, boolean whole) {
        return new BsonDocument("_id", new BsonObjectId(new ObjectId())).append("ns", new BsonString(namespace))
                .append("ids", new BsonArray(new ArrayList<>(ids))).append("whole", BsonBoolean.valueOf(whole));
    }

    /** The mark a {@code thermocline.copies} insert event's {@code fullDocument} carries, or null when it is none. */
    public static Mark parse(BsonDocument fullDocument) {
        if (fullDocument == null || !fullDocument.isString("ns") || !fullDocument.isArray("ids")) {
            return null;
        }
        String namespace = fullDocument.getString("ns").getValue();
        Set<Copied> copied = new LinkedHashSet<>();
        for (BsonValue id : fullDocument.getArray("ids")) {
            copied.add(new Copied(namespace, id));
        }
        return new Mark(copied, fullDocument.getBoolean("whole", BsonBoolean.FALSE).getValue());
    }
}
