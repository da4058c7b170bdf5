package io.thermocline.tiering.metadata;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.reactive.Blocking;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Date;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Mirror writes the archive refused for good (a unique index the fast tier does not have, a
 * validator, a document the archive cannot store), set aside in the fast tier's
 * {@code thermocline.deadLetters} so the feeder can go on. One record per document
 * ({@code _id: {ns, id}}); the fast tier still holds the document, and the evictor never removes
 * a document that has one (the archive does not hold it). The feeder retries each record
 * periodically and deletes it once a write of that document succeeds.
 */
public final class DeadLetters {

    /**
     * Error codes that repeat on every retry of the same write: DuplicateKey (11000, 11001, 12582),
     * DocumentValidationFailure (121), BSONObjectTooLarge (10334), KeyTooLong (17280), ImmutableField
     * (66), BadValue (2), TypeMismatch (14), DollarPrefixedFieldName (52), EmptyFieldName (56).
     * Anything else (network, elections, timeouts, write concern) is retried as a whole batch.
     */
    private static final Set<Integer> PERMANENT = Set.of(11000, 11001, 12582, 121, 10334, 17280, 66, 2, 14, 52, 56);

    /** One refused write: the document, what was attempted, the archive's error. */
    public record Letter(Namespace namespace, BsonValue documentId, String operation, int code, String message,
                         Instant firstAt, Instant lastAt, long attempts) {

        /** One line for a status message or a log (the document's id, never its content). */
        public String summary() {
            // the id as the shell shows it ({"_id": 77}), never the driver's BsonInt32{value=77}
            return namespace + " " + new BsonDocument("_id", documentId).toJson() + ": " + operation + " failed with code " + code + " (" + message + ")";
        }
    }

    private final MongoCollection<BsonDocument> letters;

    public DeadLetters(MetadataStore store) {
        this.letters = store.collection(MetadataStore.DEAD_LETTERS);
    }

    public static boolean permanent(int code) {
        return PERMANENT.contains(code);
    }

    static BsonDocument key(Namespace namespace, BsonValue documentId) {
        return new BsonDocument("ns", new BsonString(namespace.toString())).append("id", documentId);
    }

    /** Records (or re-records) a refused write; majority-acknowledged before the feeder checkpoints past it. */
    public void record(Namespace namespace, BsonValue documentId, String operation, int code, String message) {
        Date now = new Date();
        Blocking.run(letters.updateOne(Filters.eq("_id", key(namespace, documentId)), Updates.combine(
                Updates.set("operation", operation), Updates.set("code", code),
                Updates.set("message", message == null ? "" : message.length() > 500 ? message.substring(0, 500) : message),
                Updates.set("lastAt", now), Updates.setOnInsert("firstAt", now), Updates.inc("attempts", 1L)),
                new UpdateOptions().upsert(true)));
    }

    /** Deletes the records of documents whose write has now succeeded; returns how many there were. */
    public long clear(Namespace namespace, Collection<BsonValue> documentIds) {
        if (documentIds.isEmpty()) {
            return 0;
        }
        List<BsonDocument> keys = documentIds.stream().map(id -> key(namespace, id)).toList();
        return Blocking.single(letters.deleteMany(Filters.in("_id", keys))).orElseThrow().getDeletedCount();
    }

    /** The ids among {@code documentIds} that have a record (the server compares ids, so 1 and 1.0 match). */
    public List<BsonValue> among(Namespace namespace, Collection<BsonValue> documentIds) {
        if (documentIds.isEmpty()) {
            return List.of();
        }
        List<BsonDocument> keys = documentIds.stream().map(id -> key(namespace, id)).toList();
        List<BsonValue> found = new ArrayList<>();
        for (BsonDocument d : Blocking.list(letters.find(Filters.in("_id", keys)))) {
            found.add(d.getDocument("_id").get("id"));
        }
        return found;
    }

    public long count() {
        return Blocking.single(letters.countDocuments()).orElse(0L);
    }

    /** The oldest records first. */
    public List<Letter> oldest(int limit) {
        List<Letter> result = new ArrayList<>();
        for (BsonDocument d : Blocking.list(letters.find().sort(Sorts.ascending("firstAt")).limit(limit))) {
            result.add(fromBson(d));
        }
        return result;
    }

    public List<Letter> all() {
        return oldest(Integer.MAX_VALUE);
    }

    static Letter fromBson(BsonDocument d) {
        BsonDocument key = d.getDocument("_id");
        return new Letter(Namespace.parse(key.getString("ns").getValue()), key.get("id"), d.getString("operation", new BsonString("")).getValue(),
                d.isNumber("code") ? d.getNumber("code").intValue() : 0, d.getString("message", new BsonString("")).getValue(),
                MetadataStore.instant(d.get("firstAt")), MetadataStore.instant(d.get("lastAt")),
                d.isNumber("attempts") ? d.getNumber("attempts").longValue() : 0);
    }
}
