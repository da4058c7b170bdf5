package io.thermocline.security.roles;

/**
 * What one command needs a privilege on: a collection, a database as a whole, every normal collection of
 * every database (mongod's {@code anyNormalResource}, what a cluster-wide change stream reads), or the cluster.
 */
public sealed interface Target {
    record Collection(String db, String collection) implements Target {
        @Override
        public String database() {
            return db;
        }

        public boolean isSystem() {
            return collection.startsWith("system.");
        }

        @Override
        public String toString() {
            return db + "." + collection;
        }
    }

    record Database(String db) implements Target {
        @Override
        public String database() {
            return db;
        }

        @Override
        public String toString() {
            return db;
        }
    }

    /** Every non-system collection of every database: only {@code {db: "", collection: ""}} or {@code anyResource} cover it. */
    record AnyDatabase() implements Target {
        @Override
        public String database() {
            return "admin";
        }

        @Override
        public String toString() {
            return "any database";
        }
    }

    record Cluster() implements Target {
        @Override
        public String database() {
            return "admin";
        }

        @Override
        public String toString() {
            return "cluster";
        }
    }

    /** The database a command names in mongod's "not authorized on DB" message. */
    String database();
}
