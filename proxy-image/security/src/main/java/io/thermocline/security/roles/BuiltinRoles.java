package io.thermocline.security.roles;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * MongoDB's built-in roles with the privileges the MongoDB manual lists for them. The
 * per-database roles exist in every database; the {@code AnyDatabase}, cluster roles and
 * {@code root} only in {@code admin}. {@code root} is modelled as every action listed here on
 * any resource, which is what it grants for every command the proxy checks.
 */
public final class BuiltinRoles {
    private static final Set<String> READ = Set.of(
            "changeStream",
            "collStats",
            "dbHash",
            "dbStats",
            "find",
            "killCursors",
            "listCollections",
            "listIndexes",
            "listSearchIndexes");
    private static final Set<String> WRITE = Set.of(
            "convertToCapped",
            "createCollection",
            "createIndex",
            "createSearchIndexes",
            "dropCollection",
            "dropIndex",
            "dropSearchIndex",
            "insert",
            "remove",
            "renameCollectionSameDB",
            "update",
            "updateSearchIndex");
    private static final Set<String> DB_ADMIN = Set.of(
            "bypassDocumentValidation",
            "collMod",
            "collStats",
            "compact",
            "convertToCapped",
            "createCollection",
            "createIndex",
            "createSearchIndexes",
            "dbStats",
            "dropCollection",
            "dropDatabase",
            "dropIndex",
            "dropSearchIndex",
            "enableProfiler",
            "listCollections",
            "listIndexes",
            "listSearchIndexes",
            "planCacheIndexFilter",
            "planCacheRead",
            "planCacheWrite",
            "reIndex",
            "renameCollectionSameDB",
            "storageDetails",
            "updateSearchIndex",
            "validate");
    private static final Set<String> PROFILE_READ = Set.of(
            "changeStream",
            "collStats",
            "convertToCapped",
            "createCollection",
            "dbHash",
            "dbStats",
            "dropCollection",
            "find",
            "killCursors",
            "listCollections",
            "listIndexes",
            "planCacheRead");
    private static final Set<String> USER_ADMIN = Set.of(
            "changeCustomData",
            "changePassword",
            "createRole",
            "createUser",
            "dropRole",
            "dropUser",
            "grantRole",
            "revokeRole",
            "setAuthenticationRestriction",
            "viewRole",
            "viewUser");
    private static final Set<String> CLUSTER_MONITOR = Set.of(
            "checkFreeMonitoringStatus",
            "connPoolStats",
            "getCmdLineOpts",
            "getDefaultRWConcern",
            "getLog",
            "getParameter",
            "getShardMap",
            "hostInfo",
            "inprog",
            "listDatabases",
            "listSessions",
            "listShards",
            "netstat",
            "replSetGetConfig",
            "replSetGetStatus",
            "serverStatus",
            "shardingState",
            "top");
    /** mongod's clusterManager: the replica set and the cluster's settings, not the host (hostManager's). */
    private static final Set<String> CLUSTER_MANAGER = Set.of(
            "appendOplogNote",
            "applicationMessage",
            "cleanupOrphaned",
            "flushRouterConfig",
            "getClusterParameter",
            "getDefaultRWConcern",
            "listSessions",
            "listShards",
            "replSetConfigure",
            "replSetGetConfig",
            "replSetGetStatus",
            "replSetStateChange",
            "resync",
            "setClusterParameter",
            "setDefaultRWConcern",
            "setFeatureCompatibilityVersion");
    /** mongod's hostManager: the server process itself (kill operations, sessions and cursors, shut down, lock, set parameters). */
    private static final Set<String> HOST_MANAGER = Set.of(
            "applicationMessage",
            "closeAllDatabases",
            "connPoolSync",
            "flushRouterConfig",
            "fsync",
            "invalidateUserCache",
            "killAnyCursor",
            "killAnySession",
            "killop",
            "logRotate",
            "resync",
            "setParameter",
            "shutdown",
            "unlock");

    private static final Set<String> DB_ONLY = Set.of("read", "readWrite", "dbAdmin", "userAdmin", "dbOwner");

    private static final List<Grant> CLUSTER_MONITOR_GRANTS = List.of(
            cluster(CLUSTER_MONITOR),
            any(Set.of("collStats", "dbStats", "indexStats")),
            anyCollection("system.profile", Set.of("find")),
            new Grant("local", "oplog.rs", Set.of("find")),
            new Grant("local", "system.replset", Set.of("find")),
            new Grant("config", "", Set.of("find")));
    private static final List<Grant> CLUSTER_MANAGER_GRANTS = List.of(
            cluster(CLUSTER_MANAGER),
            any(Set.of(
                    "analyzeShardKey",
                    "clearJumboFlag",
                    "enableSharding",
                    "moveChunk",
                    "refineCollectionShardKey",
                    "reshardCollection",
                    "splitChunk",
                    "splitVector")));
    private static final List<Grant> HOST_MANAGER_GRANTS = List.of(cluster(HOST_MANAGER), any(Set.of("killCursors")));

    private static final Map<String, List<Grant>> ADMIN_ONLY = Map.of(
            "readAnyDatabase", List.of(any(READ), cluster(Set.of("listDatabases"))),
            "readWriteAnyDatabase", List.of(any(union(READ, WRITE)), cluster(Set.of("listDatabases"))),
            "dbAdminAnyDatabase",
                    List.of(
                            any(DB_ADMIN),
                            anyCollection("system.profile", PROFILE_READ),
                            cluster(Set.of("listDatabases"))),
            "userAdminAnyDatabase",
                    List.of(
                            any(USER_ADMIN),
                            cluster(Set.of("authSchemaUpgrade", "invalidateUserCache", "listDatabases")),
                            new Grant("admin", "system.users", READ),
                            new Grant("admin", "system.roles", READ)),
            "clusterMonitor", CLUSTER_MONITOR_GRANTS,
            "clusterManager", CLUSTER_MANAGER_GRANTS,
            "hostManager", HOST_MANAGER_GRANTS,
            // as mongod's: clusterMonitor, clusterManager and hostManager together, and dropDatabase anywhere
            "clusterAdmin",
                    concat(
                            CLUSTER_MONITOR_GRANTS,
                            CLUSTER_MANAGER_GRANTS,
                            HOST_MANAGER_GRANTS,
                            List.of(any(Set.of("dropDatabase")))));

    /** One row of a role's definition; {@code db == null} means "the role's own database", {@code ""} means any. */
    private record Grant(String db, String collection, Set<String> actions, ResourcePattern fixed) {
        Grant(String db, String collection, Set<String> actions) {
            this(db, collection, actions, null);
        }

        Privilege in(String roleDb) {
            return new Privilege(
                    fixed != null ? fixed : new ResourcePattern.Namespace(db == null ? roleDb : db, collection),
                    actions);
        }
    }

    private BuiltinRoles() {}

    /** The privileges of a built-in role, or empty when {@code role} is not one. */
    public static Optional<Privileges> privileges(RoleName role) {
        String db = role.db();
        List<Grant> grants = switch (role.role()) {
            case "read" -> List.of(own(READ), ownCollection("system.js", READ));
            case "readWrite" -> List.of(own(union(READ, WRITE)), ownCollection("system.js", union(READ, WRITE)));
            case "dbAdmin" -> List.of(own(DB_ADMIN), ownCollection("system.profile", PROFILE_READ));
            case "userAdmin" -> List.of(own(USER_ADMIN));
            case "dbOwner" ->
                List.of(
                        own(union(READ, WRITE, DB_ADMIN, USER_ADMIN)),
                        ownCollection("system.js", union(READ, WRITE)),
                        ownCollection("system.profile", PROFILE_READ));
            default -> db.equals("admin") ? adminRole(role.role()) : null;
        };
        if (grants == null) {
            return Optional.empty();
        }
        return Optional.of(new Privileges(grants.stream().map(g -> g.in(db)).toList()));
    }

    public static boolean isBuiltin(RoleName role) {
        return DB_ONLY.contains(role.role())
                || (role.db().equals("admin")
                        && (ADMIN_ONLY.containsKey(role.role()) || role.role().equals("root")));
    }

    private static List<Grant> adminRole(String name) {
        if (name.equals("root")) {
            Set<String> all = new LinkedHashSet<>(union(
                    READ, WRITE, DB_ADMIN, PROFILE_READ, USER_ADMIN, CLUSTER_MONITOR, CLUSTER_MANAGER, HOST_MANAGER));
            all.addAll(Set.of("indexStats", "authSchemaUpgrade"));
            return List.of(new Grant(null, null, all, new ResourcePattern.AnyResource()));
        }
        return ADMIN_ONLY.get(name);
    }

    private static Grant own(Set<String> actions) {
        return new Grant(null, "", actions);
    }

    private static Grant ownCollection(String collection, Set<String> actions) {
        return new Grant(null, collection, actions);
    }

    private static Grant any(Set<String> actions) {
        return new Grant("", "", actions);
    }

    private static Grant anyCollection(String collection, Set<String> actions) {
        return new Grant("", collection, actions);
    }

    private static Grant cluster(Set<String> actions) {
        return new Grant(null, null, actions, new ResourcePattern.Cluster());
    }

    @SafeVarargs
    private static List<Grant> concat(List<Grant>... lists) {
        List<Grant> out = new java.util.ArrayList<>();
        for (List<Grant> l : lists) {
            out.addAll(l);
        }
        return List.copyOf(out);
    }

    @SafeVarargs
    private static Set<String> union(Set<String>... sets) {
        Set<String> out = new LinkedHashSet<>();
        for (Set<String> s : sets) {
            out.addAll(s);
        }
        return out;
    }
}
