package io.thermocline.embedded.write;

import io.netty.channel.Channel;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.storage.LayerFields;
import io.thermocline.embedded.storage.MemberStore;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.types.ObjectId;

/**
 * Runs write commands on the primary's storage one document statement at a time and reports each
 * document it changed (with pre- and post-image) to a sink, which stamps them into the oplog or
 * stages them in a transaction. The caller holds the write lock. Each statement's storage write
 * and the reports of what it changed run as one {@link Step}. Inserts, deletes and DDL run here; updates, findAndModify
 * and aggregates writing with $out or $merge in {@link UpdateCommand}, {@link FindAndModifyCommand} and
 * {@link AggregateOutput}; where a write meets other open transactions' documents, in {@link HeldDocuments}.
 */
public final class WriteExecutor {
    private static final Set<String> DDL = Set.of("create", "createindexes", "dropindexes", "collmod");

    private final MemberStore store;
    private final Channel channel;
    private final Consumer<Change> sink;
    private final Step step;
    private final HeldDocuments heldDocuments;
    private final UpdateCommand updates;
    private final FindAndModifyCommand findAndModify;
    private final AggregateOutput aggregateOutput;

    /**
     * Runs a statement's storage write and its reports as one step: a plain write makes them one
     * step for snapshot readers, which must see both (storage and the commit record) or neither.
     */
    @FunctionalInterface
    public interface Step {
        BsonDocument run(Supplier<BsonDocument> statement);

        Step DIRECT = Supplier::get;
    }

    /**
     * Decides whether a statement may change these documents now. Returns false after it had to
     * wait (for a transaction holding them): the statement then looks its documents up again.
     * May throw (a transaction meeting another's documents gets a WriteConflict).
     */
    @FunctionalInterface
    public interface ConflictGuard {
        boolean clear(String database, String collection, List<BsonValue> ids);

        ConflictGuard NONE = (db, coll, ids) -> true;
    }

    /**
     * The documents other open transactions changed whose committed version matches a filter: storage
     * shows their uncommitted state (a delete, say), so the statement would miss them, where a server
     * reading its snapshot meets them and waits or conflicts.
     */
    @FunctionalInterface
    public interface HeldMatches {
        List<BsonValue> matching(String database, String collection, BsonDocument filter);

        HeldMatches NONE = (db, coll, filter) -> List.of();
    }

    public WriteExecutor(
            MemberStore store,
            Channel channel,
            Consumer<Change> sink,
            ConflictGuard guard,
            HeldMatches held,
            Step step) {
        this.store = store;
        this.channel = channel;
        this.sink = sink;
        this.step = step;
        this.heldDocuments = new HeldDocuments(store, guard, held);
        ChangeRecorder changes = new ChangeRecorder(store, sink);
        this.updates = new UpdateCommand(store, channel, step, heldDocuments, changes);
        this.findAndModify = new FindAndModifyCommand(store, channel, sink, step, heldDocuments, changes);
        this.aggregateOutput = new AggregateOutput(store, channel, sink, step, heldDocuments);
    }

    /** Whether the command's every storage change runs inside a {@link Step} of one document (else: call it in one). */
    public static boolean writesDocumentByDocument(String commandName) {
        return switch (commandName.toLowerCase()) {
            case "insert", "update", "delete", "findandmodify" -> true;
            default -> false;
        };
    }

    public static boolean isWrite(String commandName) {
        String name = commandName.toLowerCase();
        return switch (name) {
            case "insert", "update", "delete", "findandmodify", "drop", "dropdatabase", "renamecollection" -> true;
            default -> DDL.contains(name);
        };
    }

    /** An aggregate ending in $out or $merge writes; its changes are found by comparing the target before and after. */
    public static boolean isAggregateWrite(String commandName, BsonDocument command) {
        return commandName.equalsIgnoreCase("aggregate")
                && AggregateOutput.outputOf("", command).isPresent();
    }

    public BsonDocument execute(String db, String commandName, BsonDocument command) {
        if (isAggregateWrite(commandName, command)) {
            return aggregateOutput.write(db, command);
        }
        return switch (commandName.toLowerCase()) {
            case "insert" -> insert(db, command);
            case "update" -> updates.execute(db, command);
            case "delete" -> delete(db, command);
            case "findandmodify" -> findAndModify.execute(db, command);
            case "drop" -> drop(db, command);
            case "dropdatabase" -> dropDatabase(db);
            case "renamecollection" -> rename(command);
            default -> ddl(db, command);
        };
    }

    private BsonDocument insert(String db, BsonDocument command) {
        String coll = command.getString("insert").getValue();
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray documents = command.getArray("documents", new BsonArray());
        BsonArray writeErrors = new BsonArray();
        int n = 0;
        for (int i = 0; i < documents.size(); i++) {
            BsonDocument document = withId(documents.get(i).asDocument());
            while (!heldDocuments.clear(db, coll, List.of(document.get("_id")))
                    || !heldDocuments.clear(db, coll, heldDocuments.keyHolders(db, coll, document))) {
                Thread.onSpinWait();
            }
            BsonDocument reply = step.run(() -> {
                BsonDocument r = store.command(
                        channel,
                        db,
                        new BsonDocument("insert", new BsonString(coll))
                                .append("documents", new BsonArray(List.of(document))));
                if (isOk(r) && !r.containsKey("writeErrors")) {
                    sink.accept(new Change(
                            Operation.INSERT, db, coll, ChangeRecorder.key(document.get("_id")), document, null, null));
                }
                return r;
            });
            if (!isOk(reply)) {
                return reply;
            }
            if (reply.containsKey("writeErrors")) {
                writeErrors.add(DuplicateKeyErrors.withKey(
                        reindex(reply.getArray("writeErrors").get(0).asDocument(), i),
                        name -> DuplicateKeyErrors.indexKey(store, channel, db, coll, name)));
                if (ordered) {
                    break;
                }
                continue;
            }
            n++;
        }
        return result(n, writeErrors);
    }

    private BsonDocument delete(String db, BsonDocument command) {
        String coll = command.getString("delete").getValue();
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray statements = command.getArray("deletes", new BsonArray());
        int n = 0;
        BsonArray writeErrors = new BsonArray();
        for (int i = 0; i < statements.size(); i++) {
            BsonDocument statement = statements.get(i).asDocument();
            int limit = statement.getNumber("limit", new BsonInt32(0)).intValue();
            BsonDocument filter = statement.getDocument("q", new BsonDocument());
            List<RawBsonDocument> victims;
            try {
                victims = heldDocuments.targets(db, coll, filter, null, limit == 1 ? 1 : 0);
            } catch (ReplicationException e) {
                throw e; // a write conflict is the command's error (TransientTransactionError), not a bad filter
            } catch (RuntimeException e) {
                writeErrors.add(new BsonDocument("index", new BsonInt32(i))
                        .append("code", new BsonInt32(2))
                        .append("errmsg", new BsonString("bad delete filter: " + e.getMessage())));
                if (ordered) {
                    break;
                }
                continue;
            }
            for (RawBsonDocument victim : victims) {
                // one step per document: a majority read waits for one document's delete, not the statement's
                step.run(() -> {
                    store.deleteById(db, coll, victim.get("_id"));
                    sink.accept(new Change(
                            Operation.DELETE, db, coll, ChangeRecorder.key(victim.get("_id")), null, null, victim));
                    return null;
                });
            }
            n += victims.size();
        }
        return result(n, writeErrors);
    }

    private BsonDocument drop(String db, BsonDocument command) {
        String coll = command.getString("drop").getValue();
        if (store.collection(db, coll).isEmpty()) {
            return MemberStore.errorReply(26, "NamespaceNotFound", "ns not found");
        }
        BsonDocument reply = store.command(channel, db, command);
        if (isOk(reply)) {
            sink.accept(new Change(Operation.DROP, db, coll, null, null, null, null));
        }
        return reply;
    }

    private BsonDocument dropDatabase(String db) {
        List<String> collections = store.collectionNames(db);
        store.dropDatabase(db);
        for (String coll : collections) {
            sink.accept(new Change(Operation.DROP, db, coll, null, null, null, null));
        }
        sink.accept(new Change(Operation.DROP_DATABASE, db, null, null, null, null, null));
        return new BsonDocument("dropped", new BsonString(db)).append("ok", new BsonDouble(1));
    }

    private BsonDocument rename(BsonDocument command) {
        String from = command.getString("renameCollection").getValue();
        String to = command.getString("to").getValue();
        BsonDocument reply = store.command(channel, "admin", command);
        if (isOk(reply)) {
            int dot = from.indexOf('.');
            sink.accept(new Change(
                    Operation.RENAME,
                    from.substring(0, dot),
                    from.substring(dot + 1),
                    null,
                    new BsonDocument("to", new BsonString(to)),
                    null,
                    null));
        }
        return reply;
    }

    private BsonDocument ddl(String db, BsonDocument command) {
        BsonDocument reply = store.command(channel, db, command);
        if (isOk(reply)) {
            BsonDocument replayable = LayerFields.removedFrom(command);
            String coll = command.get(command.getFirstKey()).isString()
                    ? command.getString(command.getFirstKey()).getValue()
                    : null;
            sink.accept(new Change(Operation.COMMAND, db, coll, null, replayable, null, null));
        }
        return reply;
    }

    private static BsonDocument withId(BsonDocument document) {
        if (document.containsKey("_id")) {
            return document;
        }
        BsonDocument withId = new BsonDocument("_id", new BsonObjectId(new ObjectId()));
        withId.putAll(BsonBridge.mutable(document));
        return withId;
    }

    static BsonDocument reindex(BsonDocument writeError, int index) {
        BsonDocument copy = BsonBridge.mutable(writeError);
        copy.put("index", new BsonInt32(index));
        return copy;
    }

    static BsonDocument result(int n, BsonArray writeErrors) {
        BsonDocument result = new BsonDocument("n", new BsonInt32(n));
        if (!writeErrors.isEmpty()) {
            result.put("writeErrors", writeErrors);
        }
        result.put("ok", new BsonDouble(1));
        return result;
    }

    public static boolean isOk(BsonDocument reply) {
        BsonValue ok = reply.get("ok");
        return ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0;
    }
}
