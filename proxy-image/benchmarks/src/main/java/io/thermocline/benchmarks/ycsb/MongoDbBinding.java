package io.thermocline.benchmarks.ycsb;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import org.bson.Document;
import org.bson.types.Binary;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A YCSB binding on the official Java sync driver. Properties: {@code mongodb.url} (connection
 * string), {@code mongodb.database} (default {@code ycsb}). Records are documents keyed by
 * {@code _id}, fields stored as binary. All binding instances with the same URL share one
 * client (one pool), as an application would.
 */
public final class MongoDbBinding extends DB {
    private static final Map<String, MongoClient> CLIENTS = new ConcurrentHashMap<>();
    private MongoDatabase database;

    @Override
    public void init() throws DBException {
        String url = getProperties().getProperty("mongodb.url");
        if (url == null) {
            throw new DBException("set mongodb.url to the connection string to benchmark");
        }
        MongoClient client = CLIENTS.computeIfAbsent(url, u -> MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(u)).build()));
        database = client.getDatabase(getProperties().getProperty("mongodb.database", "ycsb"));
    }

    /** Closes every shared client (the runner calls it between runs). */
    public static void closeClients() {
        CLIENTS.values().forEach(MongoClient::close);
        CLIENTS.clear();
    }

    private MongoCollection<Document> table(String name) {
        return database.getCollection(name);
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        var find = table(table).find(Filters.eq("_id", key));
        if (fields != null) {
            find = find.projection(Projections.include(new ArrayList<>(fields)));
        }
        Document doc = find.first();
        if (doc == null) {
            return Status.NOT_FOUND;
        }
        copy(doc, result);
        return Status.OK;
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        var find = table(table).find(Filters.gte("_id", startkey)).sort(Sorts.ascending("_id")).limit(recordcount)
                .batchSize(recordcount);
        if (fields != null) {
            find = find.projection(Projections.include(new ArrayList<>(fields)));
        }
        try (MongoCursor<Document> cursor = find.iterator()) {
            while (cursor.hasNext()) {
                HashMap<String, ByteIterator> row = new HashMap<>();
                copy(cursor.next(), row);
                result.add(row);
            }
        }
        return Status.OK;
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        long matched = table(table).updateOne(Filters.eq("_id", key), new Document("$set", toDocument(values))).getMatchedCount();
        return matched == 1 ? Status.OK : Status.NOT_FOUND;
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        table(table).insertOne(toDocument(values).append("_id", key));
        return Status.OK;
    }

    @Override
    public Status delete(String table, String key) {
        return table(table).deleteOne(Filters.eq("_id", key)).getDeletedCount() == 1 ? Status.OK : Status.NOT_FOUND;
    }

    private static Document toDocument(Map<String, ByteIterator> values) {
        Document d = new Document();
        values.forEach((k, v) -> d.append(k, new Binary(v.toArray())));
        return d;
    }

    private static void copy(Document doc, Map<String, ByteIterator> into) {
        doc.forEach((k, v) -> {
            if (v instanceof Binary b) {
                into.put(k, new ByteArrayByteIterator(b.getData()));
            }
        });
    }
}
