package io.thermocline.benchmarks.ycsb;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.WriteConcern;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB binding for MongoDB on the official sync driver. YCSB makes one instance per
 * client thread; they share one MongoClient (and its pool), as an application would.
 * Properties: {@code mongodb.url} (connection string, database taken from its path,
 * default {@code ycsb}), {@code mongodb.writeConcern} (default {@code acknowledged}).
 */
public class MongoDbClient extends DB {

    private static final Object LOCK = new Object();
    private static MongoClient client;
    private static int users;

    private MongoClient mongo;
    private String database;
    private WriteConcern writeConcern;

    @Override
    public void init() throws DBException {
        String url = getProperties().getProperty("mongodb.url", "mongodb://localhost:27017/ycsb");
        ConnectionString connection;
        try {
            connection = new ConnectionString(url);
        } catch (IllegalArgumentException e) {
            throw new DBException("mongodb.url is not a MongoDB connection string: " + e.getMessage());
        }
        database = connection.getDatabase() == null ? "ycsb" : connection.getDatabase();
        writeConcern = WriteConcern.valueOf(getProperties().getProperty("mongodb.writeConcern", "acknowledged"));
        if (writeConcern == null) {
            throw new DBException("mongodb.writeConcern must be one of acknowledged, majority, w1, w2, unacknowledged");
        }
        synchronized (LOCK) {
            if (client == null) {
                int threads = Integer.parseInt(getProperties().getProperty("threadcount", "1"));
                client = MongoClients.create(MongoClientSettings.builder()
                        .applyConnectionString(connection)
                        .applyToConnectionPoolSettings(p -> {
                            if (connection.getMaxConnectionPoolSize() == null) {
                                p.maxSize(Math.max(threads, 1));
                            }
                        })
                        .build());
            }
            users++;
            mongo = client;
        }
    }

    @Override
    public void cleanup() {
        synchronized (LOCK) {
            if (--users == 0 && client != null) {
                client.close();
                client = null;
            }
        }
    }

    private MongoCollection<BsonDocument> collection(String table) {
        return mongo.getDatabase(database).getCollection(table, BsonDocument.class).withWriteConcern(writeConcern);
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            var find = collection(table).find(Filters.eq("_id", key)).limit(1);
            if (fields != null) {
                find = find.projection(Projections.include(new ArrayList<>(fields)));
            }
            BsonDocument doc = find.first();
            if (doc == null) {
                return Status.NOT_FOUND;
            }
            copyFields(doc, result);
            return Status.OK;
        } catch (MongoException e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        var find = collection(table).find(Filters.gte("_id", startkey)).sort(Sorts.ascending("_id")).limit(recordcount)
                .batchSize(recordcount);
        if (fields != null) {
            find = find.projection(Projections.include(new ArrayList<>(fields)));
        }
        try (MongoCursor<BsonDocument> cursor = find.iterator()) {
            while (cursor.hasNext()) {
                HashMap<String, ByteIterator> row = new HashMap<>();
                copyFields(cursor.next(), row);
                result.add(row);
            }
            return Status.OK;
        } catch (MongoException e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        try {
            List<Bson> sets = new ArrayList<>(values.size());
            values.forEach((field, value) -> sets.add(Updates.set(field, new BsonBinary(value.toArray()))));
            UpdateResult r = collection(table).updateOne(Filters.eq("_id", key), Updates.combine(sets));
            return !r.wasAcknowledged() || r.getMatchedCount() == 1 ? Status.OK : Status.NOT_FOUND;
        } catch (MongoException e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        try {
            BsonDocument doc = new BsonDocument("_id", new BsonString(key));
            values.forEach((field, value) -> doc.put(field, new BsonBinary(value.toArray())));
            collection(table).insertOne(doc);
            return Status.OK;
        } catch (MongoException e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status delete(String table, String key) {
        try {
            DeleteResult r = collection(table).deleteOne(Filters.eq("_id", key));
            return !r.wasAcknowledged() || r.getDeletedCount() == 1 ? Status.OK : Status.NOT_FOUND;
        } catch (MongoException e) {
            return Status.ERROR;
        }
    }

    private static void copyFields(BsonDocument doc, Map<String, ByteIterator> into) {
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            if (e.getValue().isBinary()) {
                into.put(e.getKey(), new ByteArrayByteIterator(e.getValue().asBinary().getData()));
            }
        }
    }
}
