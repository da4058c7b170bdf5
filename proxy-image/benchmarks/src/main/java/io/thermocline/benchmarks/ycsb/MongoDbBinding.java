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

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A YCSB binding on the official Java sync driver. Properties: {@code mongodb.url} (connection
 * string), {@code mongodb.database} (default {@code ycsb}), {@code mongodb.datefield} (a field
 * whose 8 bytes are epoch milliseconds, stored as a BSON Date; default none) and
 * {@code batchsize} (inserts sent together with insertMany, as YCSB's own MongoDB binding does;
 * default 1). Records are documents keyed by {@code _id}, other fields stored as binary. All
 * binding instances with the same URL share one client (one pool), as an application would.
 */
public final class MongoDbBinding extends DB {
    private static final Map<String, MongoClient> CLIENTS = new ConcurrentHashMap<>();
    private MongoDatabase database;
    private String dateField;
    private int batchSize = 1;
    private final List<Document> pendingInserts = new ArrayList<>();
    private String pendingTable;

    @Override
    public void init() throws DBException {
        String url = getProperties().getProperty("mongodb.url");
        if (url == null) {
            throw new DBException("set mongodb.url to the connection string to benchmark");
        }
        MongoClient client = CLIENTS.computeIfAbsent(url, u -> MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(u)).build()));
        database = client.getDatabase(getProperties().getProperty("mongodb.database", "ycsb"));
        dateField = getProperties().getProperty("mongodb.datefield");
        batchSize = Integer.parseInt(getProperties().getProperty("batchsize", "1"));
    }

    @Override
    public void cleanup() {
        flushInserts();
    }

    private void flushInserts() {
        if (!pendingInserts.isEmpty()) {
            table(pendingTable).insertMany(pendingInserts);
            pendingInserts.clear();
        }
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
        Document doc = toDocument(values).append("_id", key);
        if (batchSize <= 1) {
            table(table).insertOne(doc);
            return Status.OK;
        }
        if (!table.equals(pendingTable)) {
            flushInserts();
            pendingTable = table;
        }
        pendingInserts.add(doc);
        if (pendingInserts.size() >= batchSize) {
            flushInserts();
        }
        return Status.BATCHED_OK;
    }

    @Override
    public Status delete(String table, String key) {
        return table(table).deleteOne(Filters.eq("_id", key)).getDeletedCount() == 1 ? Status.OK : Status.NOT_FOUND;
    }

    private Document toDocument(Map<String, ByteIterator> values) {
        return document(values, dateField);
    }

    /** A record as this binding stores it: binary fields, {@code dateField} (if not null) as a Date. */
    public static Document document(Map<String, ByteIterator> values, String dateField) {
        Document d = new Document();
        values.forEach((k, v) -> d.append(k, k.equals(dateField) ? new Date(ByteBuffer.wrap(v.toArray()).getLong()) : new Binary(v.toArray())));
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
