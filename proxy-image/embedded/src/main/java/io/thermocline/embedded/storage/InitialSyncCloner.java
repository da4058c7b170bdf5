package io.thermocline.embedded.storage;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.RawBsonDocument;

/** Initial sync's copy of a member's data: every database, collection, index and document of another member. */
public final class InitialSyncCloner {
    private InitialSyncCloner() {}

    /** Replaces {@code target}'s content with a copy of {@code source}'s (initial sync after a rollback). */
    public static void copy(MemberStore source, MemberStore target) {
        for (String db : target.databaseNames()) {
            target.dropDatabase(db);
        }
        for (String db : source.databaseNames()) {
            for (String coll : source.collectionNames(db)) {
                target.command(db, new BsonDocument("create", new BsonString(coll)));
                List<BsonDocument> indexes = new ArrayList<>();
                for (BsonDocument index : source.indexes(db, coll)) {
                    if (!"_id_"
                            .equals(index.getString("name", new BsonString("")).getValue())) {
                        BsonDocument spec = BsonBridge.mutable(index);
                        spec.remove("v");
                        spec.remove("ns");
                        indexes.add(spec);
                    }
                }
                if (!indexes.isEmpty()) {
                    target.command(
                            db,
                            new BsonDocument("createIndexes", new BsonString(coll))
                                    .append("indexes", new BsonArray(indexes)));
                }
                List<RawBsonDocument> documents = source.find(db, coll, new BsonDocument(), null, 0);
                for (int i = 0; i < documents.size(); i += 1000) {
                    target.command(
                            db,
                            new BsonDocument("insert", new BsonString(coll))
                                    .append(
                                            "documents",
                                            new BsonArray(new ArrayList<>(
                                                    documents.subList(i, Math.min(documents.size(), i + 1000))))));
                }
            }
        }
    }
}
