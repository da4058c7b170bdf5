package io.thermocline.proxy.auth;

import io.thermocline.security.roles.Target;
import java.util.ArrayList;
import java.util.List;
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
 *
 * <p>The commands whose need follows from their name alone are tables in {@link CommandActions}, an aggregation's
 * stages are read by {@link PipelinePrivileges}; this class holds the entry and the rules that read a command's
 * content.
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

    /** What nobody but a holder of {@code anyResource} has: the need of a command this table does not know. */
    static final String UNKNOWN_ACTION = "anyAction";

    private CommandPrivileges() {}

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

    /** Every command this table has a rule for, in lower case (any other needs what only root has). */
    public static Set<String> commands() {
        Set<String> all = new java.util.TreeSet<>();
        List.of(
                        CommandActions.FREE,
                        CommandActions.AUTHORIZED_WHERE_ANSWERED,
                        CommandActions.ON_COLLECTION.keySet(),
                        CommandActions.ON_DATABASE.keySet(),
                        CommandActions.ON_CLUSTER.keySet(),
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
        if (CommandActions.FREE.contains(lower) || CommandActions.AUTHORIZED_WHERE_ANSWERED.contains(lower)) {
            return;
        }
        List<String> actions = CommandActions.ON_COLLECTION.get(lower);
        if (actions != null) {
            Target target = collectionOrDatabase(db, first);
            actions.forEach(a -> needs.add(new Need(target, a)));
            return;
        }
        if (UserAdminPrivileges.COMMANDS.contains(lower)) {
            UserAdminPrivileges.collect(lower, db, body, needs);
            return;
        }
        String onDb = CommandActions.ON_DATABASE.get(lower);
        if (onDb != null) {
            needs.add(new Need(new Target.Database(db), onDb));
            return;
        }
        String onCluster = CommandActions.ON_CLUSTER.get(lower);
        if (onCluster != null) {
            needs.add(new Need(new Target.Cluster(), onCluster));
            return;
        }
        switch (lower) {
            case "aggregate" -> PipelinePrivileges.aggregate(db, first, body.get("pipeline"), needs);
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
        PipelinePrivileges.pipeline(db, body.get("pipeline"), sources);
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
