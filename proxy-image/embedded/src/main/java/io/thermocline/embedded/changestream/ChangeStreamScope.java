package io.thermocline.embedded.changestream;

import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.oplog.OplogEntry;
import java.util.Set;

/** What a change stream watches: one collection, one database, or the whole deployment. */
public sealed interface ChangeStreamScope {
    Set<String> INTERNAL_DATABASES = Set.of("admin", "config", "local");

    /** The cursor namespace reported to the driver. */
    String cursorNamespace();

    boolean covers(OplogEntry entry);

    record Collection(String database, String collection) implements ChangeStreamScope {
        public String cursorNamespace() {
            return database + "." + collection;
        }

        public boolean covers(OplogEntry e) {
            return e.database().equals(database) && collection.equals(e.collection()) && e.operation() != Operation.COMMAND;
        }
    }

    record Database(String database) implements ChangeStreamScope {
        public String cursorNamespace() {
            return database + ".$cmd.aggregate";
        }

        public boolean covers(OplogEntry e) {
            return e.database().equals(database) && e.operation() != Operation.COMMAND
                && (e.collection() == null || !e.collection().startsWith("system."));
        }
    }

    record Cluster() implements ChangeStreamScope {
        public String cursorNamespace() {
            return "admin.$cmd.aggregate";
        }

        public boolean covers(OplogEntry e) {
            return !INTERNAL_DATABASES.contains(e.database()) && e.operation() != Operation.COMMAND
                && (e.collection() == null || !e.collection().startsWith("system."));
        }
    }
}
