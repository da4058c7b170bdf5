package io.thermocline.security.roles;

import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The resource of a privilege document, with mongod's matching rules: an empty {@code db} or
 * {@code collection} matches any; a database pattern covers the database itself and its
 * collections except {@code system.*} ones, which must be named; {@code cluster} and
 * {@code anyResource} are their own kinds.
 */
public sealed interface ResourcePattern {
    record Namespace(String db, String collection) implements ResourcePattern {
        @Override
        public boolean matches(Target target) {
            if (target instanceof Target.AnyDatabase) {
                return db.isEmpty() && collection.isEmpty();
            }
            if (target instanceof Target.Database d) {
                return collection.isEmpty() && (db.isEmpty() || db.equals(d.db()));
            }
            if (target instanceof Target.Collection c) {
                return (db.isEmpty() || db.equals(c.db())) && (collection.isEmpty() ? !c.isSystem() : collection.equals(c.collection()));
            }
            return false;
        }

        @Override
        public BsonDocument toDocument() {
            return new BsonDocument("db", new BsonString(db)).append("collection", new BsonString(collection));
        }
    }

    record Cluster() implements ResourcePattern {
        @Override
        public boolean matches(Target target) {
            return target instanceof Target.Cluster;
        }

        @Override
        public BsonDocument toDocument() {
            return new BsonDocument("cluster", BsonBoolean.TRUE);
        }
    }

    record AnyResource() implements ResourcePattern {
        @Override
        public boolean matches(Target target) {
            return true;
        }

        @Override
        public BsonDocument toDocument() {
            return new BsonDocument("anyResource", BsonBoolean.TRUE);
        }
    }

    boolean matches(Target target);

    BsonDocument toDocument();

    static ResourcePattern fromDocument(BsonDocument d) {
        if (d.getBoolean("cluster", BsonBoolean.FALSE).getValue()) {
            return new Cluster();
        }
        if (d.getBoolean("anyResource", BsonBoolean.FALSE).getValue()) {
            return new AnyResource();
        }
        BsonValue db = d.get("db");
        BsonValue collection = d.get("collection");
        if (db == null || !db.isString() || collection == null || !collection.isString()) {
            throw new IllegalArgumentException("a privilege resource is {db, collection}, {cluster: true} or {anyResource: true}, not " + d.toJson());
        }
        return new Namespace(db.asString().getValue(), collection.asString().getValue());
    }
}
