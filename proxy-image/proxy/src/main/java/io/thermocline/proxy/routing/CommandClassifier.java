package io.thermocline.proxy.routing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Classifies a command document (first key = command name) for routing. Commands on namespaces
 * without a tiering policy pass through to the archive unchanged, so the proxy stays a transparent
 * stand-in for the old connection string.
 */
public final class CommandClassifier {

    /** Legacy spellings a server still accepts. */
    private static final Map<String, String> ALIASES = Map.of(
            "findandmodify", "findAndModify",
            "ismaster", "isMaster",
            "buildinfo", "buildInfo");

    private static final Set<String> ANSWERED_BY_PROXY = Set.of(
            "hello",
            "isMaster",
            "ping",
            "whatsmyuri",
            "isdbgrid",
            "saslStart",
            "saslContinue",
            "authenticate",
            "logout",
            "getnonce");

    /** The archive is the cluster the application believes it talks to: its answers are the ones it expects. */
    private static final Set<String> ANSWERED_BY_ARCHIVE = Set.of(
            "buildInfo",
            "listDatabases",
            "listCollections",
            "listIndexes",
            "dbStats",
            "collStats",
            "dataSize",
            "hostInfo",
            "getParameter",
            "getCmdLineOpts",
            "getLog",
            "connectionStatus",
            "top",
            "replSetGetConfig",
            "validate",
            "profile",
            "getDefaultRWConcern",
            "lockInfo",
            "connPoolStats",
            "listCommands",
            "usersInfo",
            "rolesInfo",
            "createUser",
            "updateUser",
            "dropUser",
            "grantRolesToUser",
            "revokeRolesFromUser",
            "createRole",
            "updateRole",
            "dropRole",
            "features",
            "dbHash",
            "compact",
            "startSession",
            "createSearchIndexes",
            "updateSearchIndex",
            "dropSearchIndex",
            "listSearchIndexes");

    /** DBA commands a tiered proxy sends to both tiers and merges (tiered/admin/TierOperations), as mongos over shards. */
    private static final Set<String> MERGED_OVER_TIERS =
            Set.of("currentOp", "killOp", "serverStatus", "replSetGetStatus");

    private static final Set<String> SESSIONS =
            Set.of("endSessions", "killSessions", "killAllSessions", "killAllSessionsByPattern", "refreshSessions");

    private static final Set<String> COLLECTION_DDL =
            Set.of("create", "drop", "createIndexes", "dropIndexes", "collMod", "reIndex");

    /** Commands classified by what they contain: a name here and a case in {@link #classify}'s switch. */
    private static final Set<String> BY_CONTENT = Set.of(
            "find",
            "count",
            "distinct",
            "aggregate",
            "insert",
            "update",
            "delete",
            "findAndModify",
            "getMore",
            "killCursors",
            "commitTransaction",
            "abortTransaction",
            "explain",
            "renameCollection",
            "dropDatabase",
            "convertToCapped",
            "cloneCollectionAsCapped",
            "mapReduce",
            "bulkWrite");

    private CommandClassifier() {}

    /**
     * @param command  the command as a server sees it (kind-1 sequences folded in)
     * @param database its {@code $db}; when null, read from the command
     */
    public static CommandClass classify(BsonDocument command, String database, RoutingTable table) {
        if (command == null || command.isEmpty()) {
            return new CommandClass.PassThrough("", Reason.MALFORMED_COMMAND);
        }
        String sent = command.getFirstKey();
        String name = ALIASES.getOrDefault(sent, sent);
        String db = database != null ? database : stringOrNull(command.get("$db"));
        if (db == null) {
            return new CommandClass.PassThrough(name, Reason.MALFORMED_COMMAND);
        }
        if (ANSWERED_BY_PROXY.contains(name)) {
            return new CommandClass.Admin(name, Destination.PROXY);
        }
        if (MERGED_OVER_TIERS.contains(name)) {
            return new CommandClass.Admin(name, Destination.BOTH_TIERS);
        }
        if (ANSWERED_BY_ARCHIVE.contains(name)) {
            return new CommandClass.Admin(name, Destination.ARCHIVE);
        }
        if (SESSIONS.contains(name)) {
            return new CommandClass.Session(name);
        }
        if (COLLECTION_DDL.contains(name)) {
            return DdlClassifier.collectionDdl(name, command.get(sent), db, table);
        }
        if (!BY_CONTENT.contains(name)) {
            return new CommandClass.PassThrough(name, Reason.UNKNOWN_COMMAND);
        }
        return switch (name) {
            case "find" -> read(name, command.get(sent), db, command.get("filter"), command.get("collation"), table);
            case "count", "distinct" ->
                read(name, command.get(sent), db, command.get("query"), command.get("collation"), table);
            case "aggregate" -> aggregate(command, sent, db);
            case "insert" ->
                write(name, CommandClass.WriteKind.INSERT, command.get(sent), db, command.get("documents"), table);
            case "update" ->
                write(name, CommandClass.WriteKind.UPDATE, command.get(sent), db, command.get("updates"), table);
            case "delete" ->
                write(name, CommandClass.WriteKind.DELETE, command.get(sent), db, command.get("deletes"), table);
            case "findAndModify" -> findAndModify(command, sent, db, table);
            case "getMore" -> getMore(command, sent, db);
            case "killCursors" -> killCursors(command, sent, db);
            case "commitTransaction", "abortTransaction" -> new CommandClass.TransactionEnd(name);
            case "explain" -> explain(command, sent, db, table);
            case "renameCollection" -> DdlClassifier.rename(command, sent, table);
            case "dropDatabase" -> DdlClassifier.dropDatabase(db, table);
            case "convertToCapped" -> DdlClassifier.convertToCapped(command.get(sent), db, table);
            case "cloneCollectionAsCapped" -> DdlClassifier.cloneAsCapped(command, db, table);
            case "mapReduce" -> mapReduce(command, sent, db, table);
            case "bulkWrite" -> bulkWrite(command, table);
            default -> throw new IllegalStateException(name + " is in BY_CONTENT without a case");
        };
    }

    /**
     * Every command the proxy names, by its name as a server spells it: those it answers, merges, forwards to the
     * archive or classifies by content. The authorization table test has a row for each (CommandRoleWireTest).
     */
    public static Set<String> commands() {
        Set<String> all = new java.util.TreeSet<>();
        for (Set<String> named : List.of(
                ANSWERED_BY_PROXY, ANSWERED_BY_ARCHIVE, MERGED_OVER_TIERS, SESSIONS, COLLECTION_DDL, BY_CONTENT)) {
            all.addAll(named);
        }
        return all;
    }

    private static CommandClass read(
            String name, BsonValue collection, String db, BsonValue filter, BsonValue collation, RoutingTable table) {
        String ns = namespace(db, collection);
        if (ns == null || (filter != null && !filter.isDocument())) {
            return new CommandClass.PassThrough(name, Reason.MALFORMED_COMMAND);
        }
        if (!table.tiered(ns)) {
            return new CommandClass.PassThrough(name, Reason.UNTIERED_NAMESPACE);
        }
        return new CommandClass.Read(
                name,
                ns,
                filter == null ? null : filter.asDocument(),
                collation != null && collation.isDocument() ? collation.asDocument() : null);
    }

    private static CommandClass aggregate(BsonDocument command, String sent, String db) {
        BsonValue target = command.get(sent);
        BsonValue pipeline = command.get("pipeline");
        if (pipeline == null || !pipeline.isArray()) {
            return new CommandClass.PassThrough("aggregate", Reason.MALFORMED_COMMAND);
        }
        CommandClass.Aggregate aggregate;
        if (target.isString() && !target.asString().getValue().isEmpty()) {
            aggregate = new CommandClass.Aggregate(db, target.asString().getValue(), pipeline.asArray());
        } else if (target.isNumber() && target.asNumber().intValue() == 1) {
            aggregate = new CommandClass.Aggregate(db, null, pipeline.asArray());
        } else {
            return new CommandClass.PassThrough("aggregate", Reason.MALFORMED_COMMAND);
        }
        // The legacy {aggregate, explain: true} form is an explain, answered like {explain: {aggregate}}.
        BsonValue explain = command.get("explain");
        return explain != null && explain.isBoolean() && explain.asBoolean().getValue()
                ? new CommandClass.Explain(aggregate, command, "queryPlanner")
                : aggregate;
    }

    private static CommandClass write(
            String name,
            CommandClass.WriteKind kind,
            BsonValue collection,
            String db,
            BsonValue statements,
            RoutingTable table) {
        String ns = namespace(db, collection);
        if (ns == null || statements == null || !statements.isArray()) {
            return new CommandClass.PassThrough(name, Reason.MALFORMED_COMMAND);
        }
        if (!table.tiered(ns)) {
            return new CommandClass.PassThrough(name, Reason.UNTIERED_NAMESPACE);
        }
        List<BsonDocument> docs = new ArrayList<>();
        for (BsonValue v : statements.asArray()) {
            if (!v.isDocument()) {
                return new CommandClass.PassThrough(name, Reason.MALFORMED_COMMAND);
            }
            docs.add(v.asDocument());
        }
        return new CommandClass.Write(name, ns, kind, docs);
    }

    private static CommandClass findAndModify(BsonDocument command, String sent, String db, RoutingTable table) {
        String ns = namespace(db, command.get(sent));
        if (ns == null) {
            return new CommandClass.PassThrough("findAndModify", Reason.MALFORMED_COMMAND);
        }
        if (!table.tiered(ns)) {
            return new CommandClass.PassThrough("findAndModify", Reason.UNTIERED_NAMESPACE);
        }
        return new CommandClass.Write("findAndModify", ns, CommandClass.WriteKind.FIND_AND_MODIFY, List.of(command));
    }

    private static CommandClass getMore(BsonDocument command, String sent, String db) {
        BsonValue id = command.get(sent);
        String ns = namespace(db, command.get("collection"));
        if (!id.isNumber() || ns == null) {
            return new CommandClass.PassThrough("getMore", Reason.MALFORMED_COMMAND);
        }
        return new CommandClass.CursorOwned("getMore", ns, List.of(id.asNumber().longValue()));
    }

    private static CommandClass killCursors(BsonDocument command, String sent, String db) {
        String ns = namespace(db, command.get(sent));
        BsonValue cursors = command.get("cursors");
        if (ns == null || cursors == null || !cursors.isArray()) {
            return new CommandClass.PassThrough("killCursors", Reason.MALFORMED_COMMAND);
        }
        List<Long> ids = new ArrayList<>();
        for (BsonValue v : cursors.asArray()) {
            if (!v.isNumber()) {
                return new CommandClass.PassThrough("killCursors", Reason.MALFORMED_COMMAND);
            }
            ids.add(v.asNumber().longValue());
        }
        return new CommandClass.CursorOwned("killCursors", ns, ids);
    }

    private static CommandClass explain(BsonDocument command, String sent, String db, RoutingTable table) {
        BsonValue inner = command.get(sent);
        if (!inner.isDocument()
                || inner.asDocument().isEmpty()
                || "explain".equals(inner.asDocument().getFirstKey())) {
            return new CommandClass.PassThrough("explain", Reason.MALFORMED_COMMAND);
        }
        BsonValue verbosity = command.get("verbosity");
        return new CommandClass.Explain(
                classify(inner.asDocument(), db, table),
                inner.asDocument(),
                verbosity != null && verbosity.isString() ? verbosity.asString().getValue() : "allPlansExecution");
    }

    private static CommandClass mapReduce(BsonDocument command, String sent, String db, RoutingTable table) {
        String ns = namespace(db, command.get(sent));
        if (ns == null) {
            return new CommandClass.PassThrough("mapReduce", Reason.MALFORMED_COMMAND);
        }
        BsonValue out = command.get("out");
        boolean inline = out != null && out.isDocument() && out.asDocument().containsKey("inline");
        if (!inline) {
            String target = mapReduceTarget(db, out);
            if (target == null || table.tiered(target)) {
                return new CommandClass.Rejected(
                        "mapReduce",
                        Reason.OUTPUT_TO_TIERED_NAMESPACE,
                        "mapReduce writing into "
                                + (target == null ? "an unrecognised output" : "tiered namespace " + target)
                                + " cannot be applied to both tiers; output to an untiered collection or inline, or use aggregate");
            }
            return new CommandClass.PassThrough("mapReduce", Reason.OUTPUT_TO_UNTIERED_NAMESPACE);
        }
        if (!table.tiered(ns)) {
            return new CommandClass.PassThrough("mapReduce", Reason.UNTIERED_NAMESPACE);
        }
        BsonValue query = command.get("query");
        return new CommandClass.Read(
                "mapReduce",
                ns,
                query != null && query.isDocument() ? query.asDocument() : null,
                command.get("collation") != null && command.get("collation").isDocument()
                        ? command.getDocument("collation")
                        : null);
    }

    private static String mapReduceTarget(String db, BsonValue out) {
        if (out == null) {
            return null;
        }
        if (out.isString()) {
            return namespace(db, out);
        }
        if (!out.isDocument()) {
            return null;
        }
        BsonDocument spec = out.asDocument();
        String targetDb = stringOrNull(spec.get("db"));
        for (String action : List.of("replace", "merge", "reduce")) {
            if (spec.containsKey(action)) {
                return namespace(targetDb == null ? db : targetDb, spec.get(action));
            }
        }
        return null;
    }

    private static CommandClass bulkWrite(BsonDocument command, RoutingTable table) {
        BsonValue nsInfo = command.get("nsInfo");
        if (nsInfo == null || !nsInfo.isArray()) {
            return new CommandClass.PassThrough("bulkWrite", Reason.MALFORMED_COMMAND);
        }
        for (BsonValue entry : nsInfo.asArray()) {
            String ns = entry.isDocument() ? stringOrNull(entry.asDocument().get("ns")) : null;
            if (ns != null && table.tiered(ns)) {
                return new CommandClass.Rejected(
                        "bulkWrite",
                        Reason.UNKNOWN_COMMAND,
                        "the cross-collection bulkWrite command touches tiered namespace " + ns
                                + " and is not routed yet; "
                                + "use collection-level bulk writes (insert/update/delete), which drivers send to servers "
                                + "advertising maxWireVersion below 25");
            }
        }
        return new CommandClass.PassThrough("bulkWrite", Reason.UNTIERED_NAMESPACE);
    }

    /** {@code db.collection} when {@code collection} is a non-empty string, else null (malformed). */
    static String namespace(String db, BsonValue collection) {
        String name = stringOrNull(collection);
        return name == null || name.isEmpty() ? null : db + "." + name;
    }

    static String stringOrNull(BsonValue v) {
        return v != null && v.isString() ? v.asString().getValue() : null;
    }
}
