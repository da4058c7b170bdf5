package io.thermocline.tiering;

import com.mongodb.MongoNamespace;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.config.CollectionPolicy;
import org.bson.BsonDocument;

/**
 * A collection's full name: its database and collection, parsed and checked once where a
 * {@code "db.coll"} string enters (a change event, a stored record, a policy), then handed on
 * as a value. The database's name never holds a dot, so the first dot splits a full name.
 */
public record Namespace(String database, String collection) {

    public Namespace {
        if (database == null || collection == null || collection.isEmpty()) {
            throw new IllegalArgumentException("a namespace needs a database and a collection, got '" + database + "." + collection + "'");
        }
        // the driver's own rules for a database's name (no dot, no space, not empty, ...)
        MongoNamespace.checkDatabaseNameValidity(database);
    }

    /** {@code "db.coll"}, e.g. from a change event or a stored record. */
    public static Namespace parse(String fullName) {
        int dot = fullName == null ? -1 : fullName.indexOf('.');
        if (dot <= 0) {
            throw new IllegalArgumentException("'" + fullName + "' is not a namespace: expected DATABASE.COLLECTION, e.g. shop.orders");
        }
        return new Namespace(fullName.substring(0, dot), fullName.substring(dot + 1));
    }

    public static Namespace of(CollectionPolicy policy) {
        return new Namespace(policy.database(), policy.collection());
    }

    /** This collection on {@code client}, documents as raw BSON. */
    public MongoCollection<BsonDocument> in(MongoClient client) {
        return client.getDatabase(database).getCollection(collection, BsonDocument.class);
    }

    /** The full name, {@code "db.coll"}: the form stored in shared state and logged. */
    @Override
    public String toString() {
        return database + "." + collection;
    }
}
