package io.thermocline.embedded.write;

import io.netty.channel.Channel;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.oplog.UpdateDescriptions;
import io.thermocline.embedded.replication.ReplicationException;
import io.thermocline.embedded.storage.BsonBridge;
import io.thermocline.embedded.storage.MemberStore;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * and the reports of what it changed run as one {@link Step}.
 */
public final class WriteExecutor {
    private static final Set<String> DDL = Set.of("create", "createindexes", "dropindexes", "collmod");

    private final MemberStore store;
    private final Channel channel;
    private final Consumer<Change> sink;
    private final ConflictGuard guard;
    private final HeldMatches held;
    private final Step step;
    private final HeldUniqueKeys heldKeys;
    /** Marks a statement undone because another open transaction holds a unique key it gave a document. */
    private static final String KEY_HELD_BY = "$keyHeldBy";

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
        this.guard = guard;
        this.held = held;
        this.step = step;
        this.heldKeys = new HeldUniqueKeys(store, held);
    }

    private List<RawBsonDocument> targets(String db, String coll, BsonDocument filter, BsonDocument sort, int limit) {
        while (true) {
            List<RawBsonDocument> found = store.find(db, coll, filter, sort, limit);
            List<BsonValue> ids = new ArrayList<>(found.size());
            found.forEach(d -> ids.add(d.get("_id")));
            // a single unsorted target found in storage is a valid pick; otherwise a held document may be one
            if (limit == 0 || found.isEmpty() || (sort != null && !sort.isEmpty())) {
                for (BsonValue id : held.matching(db, coll, filter)) {
                    if (!ids.contains(id)) {
                        ids.add(id);
                    }
                }
            }
            if (guard.clear(db, coll, ids)) {
                return found;
            }
        }
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
                && outputOf("", command).isPresent();
    }

    /** The (database, collection) an aggregate writes to, when its last stage is $out or $merge. */
    private static Optional<String[]> outputOf(String db, BsonDocument command) {
        BsonValue pipeline = command.get("pipeline");
        if (pipeline == null || !pipeline.isArray() || pipeline.asArray().isEmpty()) {
            return Optional.empty();
        }
        BsonValue last = pipeline.asArray().get(pipeline.asArray().size() - 1);
        if (!last.isDocument() || last.asDocument().isEmpty()) {
            return Optional.empty();
        }
        String stage = last.asDocument().getFirstKey();
        BsonValue target = last.asDocument().get(stage);
        if (stage.equals("$merge") && target.isDocument()) {
            target = target.asDocument().get("into");
        } else if (!stage.equals("$out")) {
            return Optional.empty();
        }
        if (target == null) {
            return Optional.empty();
        }
        if (target.isString()) {
            return Optional.of(new String[] {db, target.asString().getValue()});
        }
        BsonDocument ns = target.asDocument();
        return Optional.of(new String[] {
            ns.getString("db", new BsonString(db)).getValue(),
            ns.getString("coll").getValue()
        });
    }

    public BsonDocument execute(String db, String commandName, BsonDocument command) {
        if (isAggregateWrite(commandName, command)) {
            return aggregateWrite(db, command);
        }
        return switch (commandName.toLowerCase()) {
            case "insert" -> insert(db, command);
            case "update" -> update(db, command);
            case "delete" -> delete(db, command);
            case "findandmodify" -> findAndModify(db, command);
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
            while (!guard.clear(db, coll, List.of(document.get("_id")))
                    || !guard.clear(db, coll, heldKeys.holders(db, coll, document))) {
                Thread.onSpinWait();
            }
            BsonDocument reply = step.run(() -> {
                BsonDocument r = store.command(
                        channel,
                        db,
                        new BsonDocument("insert", new BsonString(coll))
                                .append("documents", new BsonArray(List.of(document))));
                if (isOk(r) && !r.containsKey("writeErrors")) {
                    sink.accept(new Change(Operation.INSERT, db, coll, key(document.get("_id")), document, null, null));
                }
                return r;
            });
            if (!isOk(reply)) {
                return reply;
            }
            if (reply.containsKey("writeErrors")) {
                writeErrors.add(DuplicateKeyErrors.withKey(
                        reindex(reply.getArray("writeErrors").get(0).asDocument(), i),
                        name -> indexKey(db, coll, name)));
                if (ordered) {
                    break;
                }
                continue;
            }
            n++;
        }
        return result(n, writeErrors);
    }

    /**
     * An upsert by {@code _id} may create that document: like an insert, it meets another open
     * transaction's write of the same {@code _id} even where storage shows nothing (inserted and
     * removed again, or removed), as MongoDB's unique index does.
     */
    private void awaitUpsertId(String db, String coll, BsonDocument filter) {
        BsonValue id = filter.get("_id");
        if (id != null
                && id.isDocument()
                && id.asDocument().size() == 1
                && id.asDocument().containsKey("$eq")) {
            id = id.asDocument().get("$eq");
        }
        if (id == null
                || (id.isDocument()
                        && !id.asDocument().isEmpty()
                        && id.asDocument().getFirstKey().startsWith("$"))) {
            return;
        }
        while (!guard.clear(db, coll, List.of(id))) {
            Thread.onSpinWait();
        }
    }

    private BsonDocument update(String db, BsonDocument command) {
        String coll = command.getString("update").getValue();
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        BsonArray statements = command.getArray("updates", new BsonArray());
        BsonArray writeErrors = new BsonArray();
        BsonArray upserted = new BsonArray();
        int n = 0;
        int modified = 0;
        for (int i = 0; i < statements.size(); i++) {
            BsonDocument statement = statements.get(i).asDocument();
            boolean multi = statement.getBoolean("multi", BsonBoolean.FALSE).getValue();
            BsonDocument filter = statement.getDocument("q", new BsonDocument());
            if (statement.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
                awaitUpsertId(db, coll, filter);
            }
            List<RawBsonDocument> before = targets(db, coll, filter, null, multi ? 0 : 1);
            BsonDocument reply = before.size() > 1 && byIdAlone(statement)
                    ? eachDocument(db, coll, statement, before)
                    : step.run(() -> {
                        BsonDocument r = store.command(
                                channel,
                                db,
                                new BsonDocument("update", new BsonString(coll))
                                        .append("updates", new BsonArray(List.of(statement))));
                        if (isOk(r) && !r.containsKey("writeErrors")) {
                            BsonArray keyHeldBy =
                                    undoneForHeldKeys(db, coll, before, r.getArray("upserted", new BsonArray()));
                            if (!keyHeldBy.isEmpty()) {
                                return new BsonDocument(KEY_HELD_BY, keyHeldBy);
                            }
                            boolean replacement = isReplacement(statement.get("u"));
                            for (RawBsonDocument pre : before) {
                                recordModification(db, coll, pre, replacement);
                            }
                            for (BsonValue up : r.getArray("upserted", new BsonArray())) {
                                recordInsert(db, coll, up.asDocument().get("_id"));
                            }
                        }
                        return r;
                    });
            if (reply.containsKey(KEY_HELD_BY)) {
                // waits for (or, in a transaction, conflicts with) the holder, then runs the statement again
                guard.clear(db, coll, new ArrayList<>(reply.getArray(KEY_HELD_BY)));
                i--;
                continue;
            }
            if (!isOk(reply)) {
                return reply;
            }
            if (reply.containsKey("writeErrors")) {
                writeErrors.add(DuplicateKeyErrors.withKey(
                        reindex(reply.getArray("writeErrors").get(0).asDocument(), i),
                        name -> indexKey(db, coll, name)));
                if (ordered) {
                    break;
                }
                continue;
            }
            n += reply.getNumber("n", new BsonInt32(0)).intValue();
            modified += reply.getNumber("nModified", new BsonInt32(0)).intValue();
            for (BsonValue up : reply.getArray("upserted", new BsonArray())) {
                upserted.add(new BsonDocument("index", new BsonInt32(i))
                        .append("_id", up.asDocument().get("_id")));
            }
        }
        BsonDocument result = result(n, writeErrors);
        result.put("nModified", new BsonInt32(modified));
        if (!upserted.isEmpty()) {
            result.put("upserted", upserted);
        }
        return result;
    }

    /**
     * A multi-document update, one document at a time, each its own step (storage change and oplog entry): one
     * database applies an updateMany document by document too, and a reader never waits for more than one. Each
     * document is updated by its {@code _id} ({@link #byIdAlone}); one that no longer matches after a wait is
     * skipped, as a server re-checks a document after yielding.
     * The first write error stops the statement there, as on one database, and is its reply.
     */
    private BsonDocument eachDocument(String db, String coll, BsonDocument statement, List<RawBsonDocument> targets) {
        List<RawBsonDocument> before = new ArrayList<>(targets);
        boolean replacement = isReplacement(statement.get("u"));
        int n = 0;
        int modified = 0;
        for (int d = 0; d < before.size(); d++) {
            RawBsonDocument pre = before.get(d);
            BsonDocument one = new BsonDocument(); // the statement may be a RawBsonDocument, immutable
            statement.forEach(one::put);
            // found under the write lock, unchanged since: its _id alone picks it, through the _id index (the
            // statement's filter would make the engine scan the collection once per document)
            one.put("q", new BsonDocument("_id", pre.get("_id")));
            one.put("multi", BsonBoolean.FALSE);
            one.put("upsert", BsonBoolean.FALSE);
            BsonDocument reply = step.run(() -> {
                BsonDocument r = store.command(
                        channel,
                        db,
                        new BsonDocument("update", new BsonString(coll))
                                .append("updates", new BsonArray(List.of(one))));
                if (isOk(r) && !r.containsKey("writeErrors")) {
                    BsonArray keyHeldBy = undoneForHeldKeys(db, coll, List.of(pre), new BsonArray());
                    if (!keyHeldBy.isEmpty()) {
                        return new BsonDocument(KEY_HELD_BY, keyHeldBy);
                    }
                    recordModification(db, coll, pre, replacement);
                }
                return r;
            });
            if (reply.containsKey(KEY_HELD_BY)) {
                // waits for (or, in a transaction, conflicts with) the holder, then this document again as it is
                // now, if it still matches (others wrote while the write lock was released for the wait)
                guard.clear(db, coll, new ArrayList<>(reply.getArray(KEY_HELD_BY)));
                BsonDocument stillMatching = new BsonDocument(
                        "$and",
                        new BsonArray(List.of(
                                statement.getDocument("q", new BsonDocument()),
                                new BsonDocument("_id", pre.get("_id")))));
                List<RawBsonDocument> now = store.find(db, coll, stillMatching, null, 1);
                if (!now.isEmpty()) {
                    before.set(d, now.get(0));
                    d--;
                }
                continue;
            }
            if (!isOk(reply)) {
                return reply;
            }
            n += reply.getNumber("n", new BsonInt32(0)).intValue();
            modified += reply.getNumber("nModified", new BsonInt32(0)).intValue();
            if (reply.containsKey("writeErrors")) {
                return result(n, reply.getArray("writeErrors")).append("nModified", new BsonInt32(modified));
            }
        }
        return result(n, new BsonArray()).append("nModified", new BsonInt32(modified));
    }

    /**
     * Whether each document a statement matched can be updated by its {@code _id} alone: not when the update's paths
     * use the positional {@code $} (the filter picks the array element) or a collation applies (its {@code _id}
     * equality could pick a document whose _id differs only in case), which run as one statement.
     */
    private static boolean byIdAlone(BsonDocument statement) {
        if (statement.containsKey("collation")) {
            return false;
        }
        BsonValue u = statement.get("u");
        if (u == null || !u.isDocument()) {
            return false; // a pipeline update
        }
        for (Map.Entry<String, BsonValue> operator : u.asDocument().entrySet()) {
            if (!operator.getValue().isDocument()) {
                return false;
            }
            for (String path : operator.getValue().asDocument().keySet()) {
                if (path.equals("$") || path.endsWith(".$") || path.contains(".$.")) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * After an update's storage write, before anything records it: when a document it wrote now has a unique key
     * another open transaction holds ({@link HeldUniqueKeys}), puts storage back as it was and returns the holders.
     */
    private BsonArray undoneForHeldKeys(String db, String coll, List<RawBsonDocument> before, BsonArray upserted) {
        BsonArray holders = new BsonArray();
        if (!heldKeys.anyChanged(db, coll)) {
            return holders; // no open transaction holds a key here: no storage read per written document
        }
        List<BsonValue> written = new ArrayList<>();
        before.forEach(pre -> written.add(pre.get("_id")));
        upserted.forEach(up -> written.add(up.asDocument().get("_id")));
        for (BsonValue id : written) {
            store.findById(db, coll, id)
                    .ifPresent(post -> heldKeys.holders(db, coll, post).forEach(holders::add));
        }
        if (!holders.isEmpty()) {
            before.forEach(pre -> store.upsert(db, coll, pre));
            upserted.forEach(up -> store.deleteById(db, coll, up.asDocument().get("_id")));
        }
        return holders;
    }

    private void recordInsert(String db, String coll, BsonValue id) {
        store.findById(db, coll, id)
                .ifPresent(post -> sink.accept(new Change(Operation.INSERT, db, coll, key(id), post, null, null)));
    }

    private void recordModification(String db, String coll, RawBsonDocument pre, boolean replacement) {
        BsonValue id = pre.get("_id");
        Optional<RawBsonDocument> post = store.findById(db, coll, id);
        if (post.isEmpty() || post.get().equals(pre)) {
            return;
        }
        if (replacement) {
            sink.accept(new Change(Operation.REPLACE, db, coll, key(id), post.get(), null, pre));
        } else {
            sink.accept(new Change(
                    Operation.UPDATE, db, coll, key(id), post.get(), UpdateDescriptions.diff(pre, post.get()), pre));
        }
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
                victims = targets(db, coll, filter, null, limit == 1 ? 1 : 0);
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
                    sink.accept(new Change(Operation.DELETE, db, coll, key(victim.get("_id")), null, null, victim));
                    return null;
                });
            }
            n += victims.size();
        }
        return result(n, writeErrors);
    }

    private BsonDocument findAndModify(String db, BsonDocument command) {
        String coll = command.getString(command.getFirstKey()).getValue();
        BsonDocument filter = command.getDocument("query", new BsonDocument());
        BsonDocument sort = command.containsKey("sort") ? command.getDocument("sort") : null;
        if (command.getBoolean("upsert", BsonBoolean.FALSE).getValue()) {
            awaitUpsertId(db, coll, filter);
        }
        while (true) {
            BsonDocument reply = findAndModifyOnce(db, coll, command, filter, sort);
            if (!reply.containsKey(KEY_HELD_BY)) {
                return reply;
            }
            // waits for (or, in a transaction, conflicts with) the holder of a unique key it gave, then runs again
            guard.clear(db, coll, new ArrayList<>(reply.getArray(KEY_HELD_BY)));
        }
    }

    private BsonDocument findAndModifyOnce(
            String db, String coll, BsonDocument command, BsonDocument filter, BsonDocument sort) {
        List<RawBsonDocument> found = targets(db, coll, filter, sort, 1);
        RawBsonDocument pre = found.isEmpty() ? null : found.get(0);
        return step.run(() -> {
            BsonDocument reply = store.command(channel, db, command);
            if (!isOk(reply)) {
                return DuplicateKeyErrors.withKey(reply, name -> indexKey(db, coll, name));
            }
            if (!reply.isDocument("lastErrorObject")) {
                reply = withLastError(reply, lastError(db, coll, command, filter, sort, pre));
            }
            BsonDocument lastError = reply.getDocument("lastErrorObject");
            boolean remove = command.getBoolean("remove", BsonBoolean.FALSE).getValue();
            if (!remove) {
                BsonArray upserted = lastError.containsKey("upserted")
                        ? new BsonArray(List.of(new BsonDocument("_id", lastError.get("upserted"))))
                        : new BsonArray();
                BsonArray keyHeldBy = undoneForHeldKeys(db, coll, pre == null ? List.of() : List.of(pre), upserted);
                if (!keyHeldBy.isEmpty()) {
                    return new BsonDocument(KEY_HELD_BY, keyHeldBy);
                }
            }
            if (remove) {
                if (pre != null) {
                    sink.accept(new Change(Operation.DELETE, db, coll, key(pre.get("_id")), null, null, pre));
                }
            } else if (lastError.containsKey("upserted")) {
                recordInsert(db, coll, lastError.get("upserted"));
            } else if (pre != null) {
                recordModification(db, coll, pre, isReplacement(command.get("update")));
            }
            return reply;
        });
    }

    /**
     * The {@code lastErrorObject} mongod puts in every findAndModify reply, for a storage engine reply without
     * one (an upsert with {@code new: false}): what matched before the command, or the document it upserted.
     */
    private BsonDocument lastError(
            String db, String coll, BsonDocument command, BsonDocument filter, BsonDocument sort, RawBsonDocument pre) {
        if (command.getBoolean("remove", BsonBoolean.FALSE).getValue() || pre != null) {
            BsonDocument found = new BsonDocument("n", new BsonInt32(pre == null ? 0 : 1));
            return command.getBoolean("remove", BsonBoolean.FALSE).getValue()
                    ? found
                    : new BsonDocument("updatedExisting", BsonBoolean.TRUE).append("n", new BsonInt32(1));
        }
        List<RawBsonDocument> now =
                command.getBoolean("upsert", BsonBoolean.FALSE).getValue()
                        ? store.find(db, coll, filter, sort, 1)
                        : List.of();
        BsonDocument none = new BsonDocument("updatedExisting", BsonBoolean.FALSE)
                .append("n", new BsonInt32(now.isEmpty() ? 0 : 1));
        return now.isEmpty() ? none : none.append("upserted", now.get(0).get("_id"));
    }

    private static BsonDocument withLastError(BsonDocument reply, BsonDocument lastError) {
        BsonDocument out = new BsonDocument("lastErrorObject", lastError);
        reply.forEach(out::append);
        return out;
    }

    private BsonDocument aggregateWrite(String db, BsonDocument command) {
        String[] target = outputOf(db, command).orElseThrow();
        Map<BsonValue, RawBsonDocument> before = new LinkedHashMap<>();
        targets(target[0], target[1], new BsonDocument(), null, 0).forEach(d -> before.put(d.get("_id"), d));
        return step.run(() -> {
            BsonDocument reply = store.command(channel, db, command);
            if (!isOk(reply)) {
                return reply;
            }
            for (RawBsonDocument after : store.find(target[0], target[1], new BsonDocument(), null, 0)) {
                BsonValue id = after.get("_id");
                RawBsonDocument old = before.remove(id);
                if (old == null) {
                    sink.accept(new Change(Operation.INSERT, target[0], target[1], key(id), after, null, null));
                } else if (!old.equals(after)) {
                    sink.accept(new Change(Operation.REPLACE, target[0], target[1], key(id), after, null, old));
                }
            }
            before.forEach((id, old) ->
                    sink.accept(new Change(Operation.DELETE, target[0], target[1], key(id), null, null, old)));
            return reply;
        });
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
            BsonDocument replayable = MemberStore.withoutLayerFields(command);
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

    private static boolean isReplacement(BsonValue update) {
        if (update == null || !update.isDocument()) {
            return false;
        }
        BsonDocument u = update.asDocument();
        return u.isEmpty() || !u.getFirstKey().startsWith("$");
    }

    private static BsonDocument key(BsonValue id) {
        return new BsonDocument("_id", id);
    }

    /** The key pattern of index {@code name} of {@code db.coll}, from the store's own listIndexes. */
    private Optional<BsonDocument> indexKey(String db, String coll, String name) {
        BsonDocument reply = store.command(channel, db, new BsonDocument("listIndexes", new BsonString(coll)));
        if (!isOk(reply) || !reply.isDocument("cursor")) {
            return Optional.empty();
        }
        for (BsonValue spec : reply.getDocument("cursor").getArray("firstBatch", new BsonArray())) {
            if (spec.isDocument()
                    && spec.asDocument().isDocument("key")
                    && new BsonString(name).equals(spec.asDocument().get("name"))) {
                return Optional.of(spec.asDocument().getDocument("key"));
            }
        }
        return Optional.empty();
    }

    private static BsonDocument reindex(BsonDocument writeError, int index) {
        BsonDocument copy = BsonBridge.mutable(writeError);
        copy.put("index", new BsonInt32(index));
        return copy;
    }

    private static BsonDocument result(int n, BsonArray writeErrors) {
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
