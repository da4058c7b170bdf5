package io.thermocline.proxy.auth;

import io.thermocline.security.roles.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What a command needs, as mongod checks it: an action on each collection, database or the
 * cluster it touches, including every collection its pipeline names ({@code $lookup},
 * {@code $graphLookup}, {@code $unionWith}, {@code $facet}, {@code $out}, {@code $merge}, at any
 * depth). A pure function of the command; a command it does not know needs what nobody but
 * {@code root} has, so an unknown command fails closed.
 */
public final class CommandPrivileges {
    /** One privilege a command needs. */
    public record Need(Target target, String action, Need orElse, Need onlyIf) {
        public Need(Target target, String action) {
            this(target, action, null, null);
        }

        /** This need, or else {@code other}: either suffices (mongod's create: createCollection on it, or insert into it). */
        Need or(Need other) {
            return new Need(target, action, other, onlyIf);
        }

        /** This need only from a user who holds {@code condition} (mongod: a view's sources, only for who may read the view). */
        Need onlyIf(Need condition) {
            return new Need(target, action, orElse, condition);
        }
    }

    /** Commands every client may run, logged in or not (handshake, sessions, auth) or that act on the caller only. */
    private static final Set<String> FREE = Set.of(
            "hello",
            "ismaster",
            "ping",
            "buildinfo",
            "connectionstatus",
            "endsessions",
            "startsession",
            "refreshsessions",
            "committransaction",
            "aborttransaction",
            "getlasterror",
            "whatsmyuri",
            "listcommands",
            "logout",
            "saslstart",
            "saslcontinue",
            "authenticate",
            "getnonce",
            "features",
            "isdbgrid");
    /**
     * Commands mongod authorizes by what they act on, checked where they are answered: any logged-in
     * user may continue or kill its own cursors (the cursor handlers check the creator) and list
     * the databases it holds privileges in ({@link AuthorizedDatabases}).
     */
    private static final Set<String> AUTHORIZED_WHERE_ANSWERED = Set.of("getmore", "killcursors", "listdatabases");
    /** Commands on the collection named by their first field, with the action each needs. */
    private static final Map<String, List<String>> ON_COLLECTION = Map.ofEntries(
            Map.entry("find", List.of("find")),
            Map.entry("count", List.of("find")),
            Map.entry("distinct", List.of("find")),
            Map.entry("listindexes", List.of("listIndexes")),
            Map.entry("insert", List.of("insert")),
            Map.entry("delete", List.of("remove")),
            Map.entry("drop", List.of("dropCollection")),
            Map.entry("createindexes", List.of("createIndex")),
            Map.entry("dropindexes", List.of("dropIndex")),
            Map.entry("deleteindexes", List.of("dropIndex")),
            Map.entry("collstats", List.of("collStats")),
            Map.entry("validate", List.of("validate")),
            Map.entry("compact", List.of("compact")),
            Map.entry("converttocapped", List.of("convertToCapped")),
            Map.entry("dbhash", List.of("dbHash")),
            Map.entry("reindex", List.of("reIndex")),
            Map.entry("createsearchindexes", List.of("createSearchIndexes")),
            Map.entry("listsearchindexes", List.of("listSearchIndexes")),
            Map.entry("dropsearchindex", List.of("dropSearchIndex")),
            Map.entry("updatesearchindex", List.of("updateSearchIndex")));
    /** Commands on the database they are sent to. */
    private static final Map<String, String> ON_DATABASE = Map.ofEntries(
            Map.entry("listcollections", "listCollections"),
            Map.entry("dbstats", "dbStats"),
            Map.entry("dropdatabase", "dropDatabase"),
            Map.entry("dropuser", "dropUser"),
            Map.entry("dropallusersfromdatabase", "dropUser"),
            Map.entry("droprole", "dropRole"),
            Map.entry("dropallrolesfromdatabase", "dropRole"),
            Map.entry("usersinfo", "viewUser"),
            Map.entry("rolesinfo", "viewRole"));
    /** Cluster-wide commands, with the action each needs. */
    private static final Map<String, String> ON_CLUSTER = Map.ofEntries(
            Map.entry("serverstatus", "serverStatus"),
            Map.entry("lockinfo", "serverStatus"),
            Map.entry("replsetgetstatus", "replSetGetStatus"),
            Map.entry("replsetgetconfig", "replSetGetConfig"),
            Map.entry("currentop", "inprog"),
            Map.entry("killop", "killop"),
            Map.entry("hostinfo", "hostInfo"),
            Map.entry("getcmdlineopts", "getCmdLineOpts"),
            Map.entry("getparameter", "getParameter"),
            Map.entry("setparameter", "setParameter"),
            Map.entry("top", "top"),
            Map.entry("getlog", "getLog"),
            Map.entry("connpoolstats", "connPoolStats"),
            Map.entry("netstat", "netstat"),
            Map.entry("fsync", "fsync"),
            Map.entry("fsyncunlock", "unlock"),
            Map.entry("logrotate", "logRotate"),
            Map.entry("shutdown", "shutdown"),
            Map.entry("getdefaultrwconcern", "getDefaultRWConcern"),
            Map.entry("setdefaultrwconcern", "setDefaultRWConcern"),
            Map.entry("replsetstepdown", "replSetStateChange"),
            Map.entry("replsetfreeze", "replSetStateChange"),
            Map.entry("replsetreconfig", "replSetConfigure"),
            Map.entry("killallsessions", "killAnySession"),
            Map.entry("killallsessionsbypattern", "killAnySession"),
            Map.entry("setfeaturecompatibilityversion", "setFeatureCompatibilityVersion"),
            Map.entry("listshards", "listShards"),
            Map.entry("getshardmap", "getShardMap"),
            Map.entry("appendoplognote", "appendOplogNote"),
            Map.entry("invalidateusercache", "invalidateUserCache"),
            Map.entry("getclusterparameter", "getClusterParameter"),
            Map.entry("setclusterparameter", "setClusterParameter"));
    /** What nobody but a holder of {@code anyResource} has: the need of a command this table does not know. */
    static final String UNKNOWN_ACTION = "anyAction";

    private CommandPrivileges() {}

    /** Whether {@code command}'s first value is a collection name (safe to show in a denial), not a payload such as eval's code. */
    public static boolean firstValueNamesCollection(String command) {
        String lower = command.toLowerCase();
        return ON_COLLECTION.containsKey(lower) && !lower.equals("datasize")
                || Set.of(
                                "aggregate",
                                "update",
                                "findandmodify",
                                "killcursors",
                                "create",
                                "collmod",
                                "mapreduce",
                                "clonecollectionascapped")
                        .contains(lower);
    }

    /** Commands with a rule of their own in {@link #collect}'s switch. */
    private static final Set<String> BY_CONTENT = Set.of(
            "aggregate",
            "update",
            "findandmodify",
            "explain",
            "renamecollection",
            "datasize",
            "bulkwrite",
            "mapreduce",
            "clonecollectionascapped",
            "create",
            "profile",
            "killsessions",
            "collmod");

    /** Commands mongod runs only when sent to {@code admin}: elsewhere they are 13 whoever sends them. */
    private static final Set<String> ADMIN_ONLY = Set.of(
            "listdatabases",
            "renamecollection",
            "currentop",
            "killop",
            "lockinfo",
            "getcmdlineopts",
            "getlog",
            "getparameter",
            "setparameter",
            "fsync",
            "fsyncunlock",
            "logrotate",
            "shutdown",
            "replsetgetstatus",
            "replsetgetconfig",
            "replsetstepdown",
            "replsetfreeze",
            "replsetreconfig",
            "setfeaturecompatibilityversion",
            "getdefaultrwconcern",
            "setdefaultrwconcern",
            "getclusterparameter",
            "setclusterparameter",
            "appendoplognote",
            "top",
            "getshardmap",
            "listshards",
            "netstat");

    /** Whether mongod refuses {@code command} on any database but {@code admin} ("may only be run against the admin database"). */
    public static boolean adminOnly(String command) {
        return ADMIN_ONLY.contains(command.toLowerCase());
    }

    /** Every command this table has a rule for, in lower case (any other needs what only root has). */
    public static Set<String> commands() {
        Set<String> all = new java.util.TreeSet<>();
        List.of(
                        FREE,
                        AUTHORIZED_WHERE_ANSWERED,
                        ON_COLLECTION.keySet(),
                        ON_DATABASE.keySet(),
                        ON_CLUSTER.keySet(),
                        BY_CONTENT,
                        UserAdminPrivileges.COMMANDS)
                .forEach(all::addAll);
        return all;
    }

    /** Everything {@code body} (a command sent to database {@code db}) needs; empty when it needs nothing. */
    public static List<Need> of(String db, BsonDocument body) {
        List<Need> needs = new ArrayList<>();
        collect(db, body, needs);
        return needs;
    }

    private static void collect(String db, BsonDocument body, List<Need> needs) {
        if (body.isEmpty()) {
            return;
        }
        String name = body.getFirstKey();
        String lower = name.toLowerCase();
        BsonValue first = body.get(name);
        if (FREE.contains(lower) || AUTHORIZED_WHERE_ANSWERED.contains(lower)) {
            return;
        }
        List<String> actions = ON_COLLECTION.get(lower);
        if (actions != null) {
            Target target = collectionOrDatabase(db, first);
            actions.forEach(a -> needs.add(new Need(target, a)));
            return;
        }
        if (UserAdminPrivileges.COMMANDS.contains(lower)) {
            UserAdminPrivileges.collect(lower, db, body, needs);
            return;
        }
        String onDb = ON_DATABASE.get(lower);
        if (onDb != null) {
            needs.add(new Need(new Target.Database(db), onDb));
            return;
        }
        String onCluster = ON_CLUSTER.get(lower);
        if (onCluster != null) {
            needs.add(new Need(new Target.Cluster(), onCluster));
            return;
        }
        switch (lower) {
            case "aggregate" -> aggregate(db, first, body.get("pipeline"), needs);
            case "update" -> {
                Target t = collectionOrDatabase(db, first);
                needs.add(new Need(t, "update"));
                if (anyUpsert(body.get("updates"))) {
                    needs.add(new Need(t, "insert"));
                }
            }
            case "findandmodify" -> {
                Target t = collectionOrDatabase(db, first);
                needs.add(new Need(t, "find"));
                boolean remove = MongoBooleans.isTrue(body.get("remove"));
                needs.add(new Need(t, remove ? "remove" : "update"));
                if (MongoBooleans.isTrue(body.get("upsert"))) {
                    needs.add(new Need(t, "insert"));
                }
            }
            case "explain" -> {
                if (first instanceof BsonDocument inner) {
                    // the inner command's own $db, when it names one, is where it would run: check that database
                    collect(inner.isString("$db") ? inner.getString("$db").getValue() : db, inner, needs);
                    if (inner.containsKey("$db") && !inner.isString("$db")) {
                        needs.add(new Need(new Target.Cluster(), UNKNOWN_ACTION));
                    }
                } else {
                    needs.add(new Need(new Target.Cluster(), UNKNOWN_ACTION));
                }
            }
            case "renamecollection" -> rename(first, body.get("to"), needs);
            // dataSize names a full namespace ("db.collection"), which may be another database than $db
            case "datasize" ->
                needs.add(new Need(
                        first != null && first.isString()
                                ? namespace(first.asString().getValue())
                                : new Target.Cluster(),
                        first != null && first.isString() ? "find" : UNKNOWN_ACTION));
            case "bulkwrite" -> {
                for (BsonValue ns : body.getArray("nsInfo", new BsonArray())) {
                    if (ns instanceof BsonDocument d && d.isString("ns")) {
                        Target t = namespace(d.getString("ns").getValue());
                        List.of("insert", "update", "remove").forEach(a -> needs.add(new Need(t, a)));
                    }
                }
            }
            case "killsessions" -> {
                // mongod kills all of the caller's sessions for an empty list; at the backend the caller is the proxy's
                // user, whose sessions are every client's: only who may kill any session may send that
                if (!(first instanceof BsonArray listed) || listed.isEmpty()) {
                    needs.add(new Need(new Target.Cluster(), "killAnySession"));
                }
            }
            case "create" -> {
                Target t = collectionOrDatabase(db, first);
                needs.add(new Need(t, "createCollection").or(new Need(t, "insert")));
                if (MongoBooleans.isTrue(body.get("capped"))) {
                    needs.add(new Need(t, "convertToCapped"));
                }
                if (body.isString("viewOn")) {
                    viewSources(db, t, body, needs);
                }
            }
            case "collmod" -> {
                Target t = collectionOrDatabase(db, first);
                needs.add(new Need(t, "collMod"));
                if (body.containsKey("viewOn") || body.containsKey("pipeline")) {
                    viewSources(db, t, body, needs);
                }
            }
            case "profile" -> {
                // reading the level and slowms changes nothing: mongod lets a reader of system.profile do it
                Need enable = new Need(new Target.Database(db), "enableProfiler");
                boolean readOnly = first != null
                        && first.isNumber()
                        && first.asNumber().intValue() < 0
                        && !body.containsKey("slowms")
                        && !body.containsKey("sampleRate")
                        && !body.containsKey("filter");
                needs.add(readOnly ? enable.or(new Need(new Target.Collection(db, "system.profile"), "find")) : enable);
            }
            case "mapreduce" -> {
                needs.add(new Need(collectionOrDatabase(db, first), "find"));
                mapReduceOutput(db, body.get("out"), needs);
            }
            case "clonecollectionascapped" -> {
                needs.add(new Need(collectionOrDatabase(db, first), "find"));
                Target copy = collectionOrDatabase(db, body.get("toCollection"));
                List.of("insert", "createIndex", "convertToCapped").forEach(a -> needs.add(new Need(copy, a)));
            }
            default -> needs.add(new Need(new Target.Cluster(), UNKNOWN_ACTION));
        }
    }

    /**
     * As mongod: who may read a view must be able to read what it reads (its {@code viewOn} and every namespace its
     * pipeline names), since reading a view needs find on the view only; who may not read it may define it over anything.
     */
    private static void viewSources(String db, Target view, BsonDocument body, List<Need> needs) {
        List<Need> sources = new ArrayList<>();
        if (body.isString("viewOn")) {
            sources.add(
                    new Need(new Target.Collection(db, body.getString("viewOn").getValue()), "find"));
        }
        pipeline(db, body.get("pipeline"), sources);
        Need readsTheView = new Need(view, "find");
        sources.forEach(source -> needs.add(source.onlyIf(readsTheView)));
    }

    /**
     * As mongod: an inline mapReduce writes nothing; one into a collection needs {@code insert} there, and {@code remove}
     * when it replaces the collection (a name, or {@code {replace: ...}}), {@code update} when it merges or reduces into it.
     */
    private static void mapReduceOutput(String db, BsonValue out, List<Need> needs) {
        if (out != null && out.isString()) {
            Target t = new Target.Collection(db, out.asString().getValue());
            needs.add(new Need(t, "insert"));
            needs.add(new Need(t, "remove"));
            return;
        }
        if (!(out instanceof BsonDocument d) || d.isEmpty()) {
            needs.add(new Need(new Target.Cluster(), UNKNOWN_ACTION));
            return;
        }
        if (d.containsKey("inline")) {
            return;
        }
        String mode = d.getFirstKey();
        BsonValue into = d.get(mode);
        if (!Set.of("replace", "merge", "reduce").contains(mode) || !into.isString()) {
            needs.add(new Need(new Target.Cluster(), UNKNOWN_ACTION));
            return;
        }
        Target t = new Target.Collection(
                d.isString("db") ? d.getString("db").getValue() : db,
                into.asString().getValue());
        needs.add(new Need(t, "insert"));
        needs.add(new Need(t, mode.equals("replace") ? "remove" : "update"));
    }

    private static void aggregate(String db, BsonValue source, BsonValue pipeline, List<Need> needs) {
        boolean onCollection = source != null && source.isString();
        Target input =
                onCollection ? new Target.Collection(db, source.asString().getValue()) : new Target.Database(db);
        String firstStage = firstStage(pipeline);
        switch (firstStage) {
            case "$changeStream" -> {
                // as mongod: a collection's stream needs find + changeStream on it, a database's on the database,
                // the cluster's ({allChangesForCluster: true}, on admin) on every database's normal collections
                Target watched =
                        onCollection ? input : allChangesForCluster(pipeline) ? new Target.AnyDatabase() : input;
                needs.add(new Need(watched, "changeStream"));
                needs.add(new Need(watched, "find"));
            }
            case "$collStats" -> needs.add(new Need(input, "collStats"));
            case "$indexStats" -> needs.add(new Need(input, "indexStats"));
            case "$currentOp", "$listSessions" ->
                needs.add(new Need(new Target.Cluster(), firstStage.equals("$currentOp") ? "inprog" : "listSessions"));
            case "$planCacheStats" -> needs.add(new Need(input, "planCacheRead"));
            // the backend sees one user, the proxy's, so it cannot list only the caller's own sessions: listing any
            // needs
            // what mongod requires for listing every user's ({allUsers: true})
            case "$listLocalSessions" -> needs.add(new Need(new Target.Cluster(), "listSessions"));
            case "$documents" -> {}
            default -> {
                if (onCollection) {
                    needs.add(new Need(input, "find"));
                } else if (!firstStage.isEmpty() && !firstStage.equals("$documents")) {
                    needs.add(new Need(new Target.Cluster(), UNKNOWN_ACTION));
                }
            }
        }
        pipeline(db, pipeline, needs);
    }

    /** The collections the stages name, at any depth. */
    private static void pipeline(String db, BsonValue pipeline, List<Need> needs) {
        if (!(pipeline instanceof BsonArray stages)) {
            return;
        }
        for (BsonValue s : stages) {
            if (!(s instanceof BsonDocument stage) || stage.isEmpty()) {
                continue;
            }
            String op = stage.getFirstKey();
            BsonValue spec = stage.get(op);
            switch (op) {
                case "$lookup", "$graphLookup" -> {
                    if (spec instanceof BsonDocument d) {
                        BsonValue from = d.get("from");
                        if (from != null) {
                            needs.add(new Need(fromTarget(db, from), "find"));
                        }
                        pipeline(
                                from instanceof BsonDocument f && f.isString("db")
                                        ? f.getString("db").getValue()
                                        : db,
                                d.get("pipeline"),
                                needs);
                    }
                }
                case "$unionWith" -> {
                    if (spec != null && spec.isString()) {
                        needs.add(new Need(
                                new Target.Collection(db, spec.asString().getValue()), "find"));
                    } else if (spec instanceof BsonDocument d) {
                        if (d.isString("coll")) {
                            needs.add(new Need(
                                    new Target.Collection(
                                            db, d.getString("coll").getValue()),
                                    "find"));
                        }
                        pipeline(db, d.get("pipeline"), needs);
                    }
                }
                case "$facet" -> {
                    if (spec instanceof BsonDocument d) {
                        d.values().forEach(sub -> pipeline(db, sub, needs));
                    }
                }
                case "$out" -> {
                    Target t = outTarget(db, spec, "coll");
                    needs.add(new Need(t, "insert"));
                    needs.add(new Need(t, "remove"));
                }
                case "$merge" -> {
                    Target t = spec instanceof BsonDocument d
                            ? outTarget(db, d.get("into"), "coll")
                            : outTarget(db, spec, "coll");
                    needs.add(new Need(t, "insert"));
                    needs.add(new Need(t, "update"));
                }
                default -> {}
            }
        }
    }

    private static Target fromTarget(String db, BsonValue from) {
        if (from instanceof BsonDocument d && d.isString("coll")) {
            return new Target.Collection(
                    d.isString("db") ? d.getString("db").getValue() : db,
                    d.getString("coll").getValue());
        }
        return from.isString() ? new Target.Collection(db, from.asString().getValue()) : new Target.Cluster();
    }

    private static Target outTarget(String db, BsonValue spec, String collField) {
        if (spec != null && spec.isString()) {
            return new Target.Collection(db, spec.asString().getValue());
        }
        if (spec instanceof BsonDocument d && d.isString(collField)) {
            return new Target.Collection(
                    d.isString("db") ? d.getString("db").getValue() : db,
                    d.getString(collField).getValue());
        }
        return new Target.Cluster();
    }

    private static void rename(BsonValue from, BsonValue to, List<Need> needs) {
        if (from == null || !from.isString() || to == null || !to.isString()) {
            needs.add(new Need(new Target.Cluster(), UNKNOWN_ACTION));
            return;
        }
        Target.Collection source = namespace(from.asString().getValue());
        Target.Collection target = namespace(to.asString().getValue());
        if (source.db().equals(target.db())) {
            needs.add(new Need(source, "renameCollectionSameDB"));
            needs.add(new Need(target, "renameCollectionSameDB"));
        } else {
            List.of("find", "dropCollection").forEach(a -> needs.add(new Need(source, a)));
            List.of("insert", "createIndex", "createCollection").forEach(a -> needs.add(new Need(target, a)));
        }
    }

    private static Target.Collection namespace(String ns) {
        int dot = ns.indexOf('.');
        return dot <= 0
                ? new Target.Collection(ns, "")
                : new Target.Collection(ns.substring(0, dot), ns.substring(dot + 1));
    }

    private static Target collectionOrDatabase(String db, BsonValue name) {
        return name != null && name.isString()
                ? new Target.Collection(db, name.asString().getValue())
                : new Target.Database(db);
    }

    private static boolean allChangesForCluster(BsonValue pipeline) {
        BsonValue spec = ((BsonDocument) pipeline.asArray().get(0)).get("$changeStream");
        return spec instanceof BsonDocument d && MongoBooleans.isTrue(d.get("allChangesForCluster"));
    }

    private static String firstStage(BsonValue pipeline) {
        if (pipeline instanceof BsonArray a && !a.isEmpty() && a.get(0) instanceof BsonDocument d && !d.isEmpty()) {
            return d.getFirstKey();
        }
        return "";
    }

    private static boolean anyUpsert(BsonValue updates) {
        if (updates instanceof BsonArray a) {
            for (BsonValue u : a) {
                if (u instanceof BsonDocument d && MongoBooleans.isTrue(d.get("upsert"))) {
                    return true;
                }
            }
        }
        return false;
    }
}
