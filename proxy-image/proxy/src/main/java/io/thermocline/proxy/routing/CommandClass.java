package io.thermocline.proxy.routing;

import java.util.List;
import java.util.Objects;
import org.bson.BsonArray;
import org.bson.BsonDocument;

/** What a client command is, as far as routing cares. Produced by {@link CommandClassifier}. */
public sealed interface CommandClass {

    String commandName();

    /** {@code find}, {@code count}, {@code distinct} (and inline {@code mapReduce}) on a tiered namespace. */
    record Read(String commandName, String namespace, BsonDocument filter, BsonDocument collation) implements CommandClass {
        public Read {
            Objects.requireNonNull(namespace, "namespace");
            filter = filter == null ? new BsonDocument() : filter;
        }
    }

    /** {@code aggregate}; {@code collection} is null for {@code aggregate: 1}. Routed on every namespace it touches. */
    record Aggregate(String database, String collection, BsonArray pipeline) implements CommandClass {
        public Aggregate {
            Objects.requireNonNull(database, "database");
            pipeline = pipeline == null ? new BsonArray() : pipeline;
        }

        @Override
        public String commandName() {
            return "aggregate";
        }
    }

    enum WriteKind { INSERT, UPDATE, DELETE, FIND_AND_MODIFY }

    /**
     * A write on a tiered namespace. {@code statements}: the documents of an insert, the update or delete
     * statements, or the findAndModify command itself.
     */
    record Write(String commandName, String namespace, WriteKind kind, List<BsonDocument> statements) implements CommandClass {
        public Write {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(kind, "kind");
            statements = List.copyOf(statements);
        }
    }

    /** DDL touching tiered namespaces: applied to both tiers. */
    record Ddl(String commandName, List<String> namespaces) implements CommandClass {
        public Ddl {
            namespaces = List.copyOf(namespaces);
        }
    }

    /** getMore / killCursors: served by whoever owns the cursor (tier, member, proxy replica). */
    record CursorOwned(String commandName, String namespace, List<Long> cursorIds) implements CommandClass {
        public CursorOwned {
            cursorIds = List.copyOf(cursorIds);
        }
    }

    /** Session bookkeeping a client may have on either tier (endSessions, killSessions, ...). */
    record Session(String commandName) implements CommandClass {
    }

    /** commitTransaction / abortTransaction: the tier the transaction is pinned to. */
    record TransactionEnd(String commandName) implements CommandClass {
    }

    /** Handshake, admin and diagnostic commands, with their documented destination. */
    record Admin(String commandName, Destination destination) implements CommandClass {
        public Admin {
            Objects.requireNonNull(destination, "destination");
        }
    }

    /** {@code explain} of another command; the proxy adds a {@link RoutingExplanation} to the answer. */
    record Explain(CommandClass explained, BsonDocument explainedCommand, String verbosity) implements CommandClass {
        @Override
        public String commandName() {
            return "explain";
        }
    }

    /** Sent to the archive unchanged: untiered namespaces, unknown and malformed commands (the archive reports errors). */
    record PassThrough(String commandName, Reason reason) implements CommandClass {
    }

    /** Cannot be served correctly across tiers; the client gets {@code message}. */
    record Rejected(String commandName, Reason reason, String message) implements CommandClass {
    }
}
