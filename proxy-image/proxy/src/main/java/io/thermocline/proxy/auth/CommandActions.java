package io.thermocline.proxy.auth;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The commands whose privileges follow from their name alone, as mongod checks them: those every client may run,
 * those checked where they are answered, and the action each other needs on its collection, its database or the
 * cluster; and the commands mongod runs only on {@code admin}. {@link CommandPrivileges} reads these tables first and
 * has a rule of its own for every other command it knows.
 */
final class CommandActions {
    /** Commands every client may run, logged in or not (handshake, sessions, auth) or that act on the caller only. */
    static final Set<String> FREE = Set.of(
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
    static final Set<String> AUTHORIZED_WHERE_ANSWERED = Set.of("getmore", "killcursors", "listdatabases");
    /** Commands on the collection named by their first field, with the action each needs. */
    static final Map<String, List<String>> ON_COLLECTION = Map.ofEntries(
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
    static final Map<String, String> ON_DATABASE = Map.ofEntries(
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
    static final Map<String, String> ON_CLUSTER = Map.ofEntries(
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

    private CommandActions() {}

    /** Whether {@code command}'s first value is a collection name (safe to show in a denial), not a payload such as eval's code. */
    static boolean firstValueNamesCollection(String command) {
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

    /** Commands mongod runs only when sent to {@code admin}: elsewhere they are 13 whoever sends them. */
    static final Set<String> ADMIN_ONLY = Set.of(
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
    static boolean adminOnly(String command) {
        return ADMIN_ONLY.contains(command.toLowerCase());
    }
}
