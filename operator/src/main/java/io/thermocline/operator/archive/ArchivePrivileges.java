package io.thermocline.operator.archive;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.bson.Document;

/**
 * What the archive Secret's user may do, from {@code connectionStatus} with {@code showPrivileges}:
 * the actions granted on every database ({@code {db: "", collection: ""}}, or {@code anyResource}) and on
 * the cluster. {@code checked} is false when the archive runs without access control (no user is
 * authenticated, so there is nothing to check). {@code userDirectory}: the proxy reads the archive's users with
 * this user ({@code spec.auth.users} names archive, the default), so viewUser and viewRole are needed too.
 */
public record ArchivePrivileges(boolean checked, Set<String> anyDatabase, Set<String> cluster, boolean userDirectory) {

    /** readWriteAnyDatabase's actions the feeder, warmer, evictor's checks and the proxy's DDL fan-out use. */
    static final List<String> DATA_ACTIONS = List.of("find", "insert", "update", "remove", "listCollections", "listIndexes",
            "createCollection", "createIndex", "dropCollection", "dropIndex", "killCursors");
    /** The proxy reads the archive's users and roles (auth.users: archive) with this user. */
    static final List<String> USER_DIRECTORY_ACTIONS = List.of("viewUser", "viewRole");
    static final List<String> CLUSTER_ACTIONS = List.of("listDatabases");

    public static final ArchivePrivileges UNCHECKED = new ArchivePrivileges(false, Set.of(), Set.of(), true);

    public ArchivePrivileges {
        anyDatabase = Set.copyOf(anyDatabase);
        cluster = Set.copyOf(cluster);
    }

    /** From a {@code connectionStatus: 1, showPrivileges: true} reply. */
    public static ArchivePrivileges from(Document connectionStatus) {
        Document authInfo = connectionStatus.get("authInfo", Document.class);
        List<?> users = authInfo == null ? List.of() : authInfo.getList("authenticatedUsers", Object.class, List.of());
        if (users.isEmpty()) {
            return UNCHECKED;
        }
        Set<String> anyDatabase = new TreeSet<>();
        Set<String> cluster = new TreeSet<>();
        for (Document privilege : authInfo.getList("authenticatedUserPrivileges", Document.class, List.of())) {
            Document resource = privilege.get("resource", Document.class);
            List<String> actions = privilege.getList("actions", String.class, List.of());
            if (resource == null) {
                continue;
            }
            if (Boolean.TRUE.equals(resource.getBoolean("anyResource"))) {
                anyDatabase.addAll(actions);
                cluster.addAll(actions);
            } else if (Boolean.TRUE.equals(resource.getBoolean("cluster"))) {
                cluster.addAll(actions);
            } else if ("".equals(resource.getString("db")) && "".equals(resource.getString("collection"))) {
                anyDatabase.addAll(actions);
            }
        }
        return new ArchivePrivileges(true, anyDatabase, cluster, true);
    }

    public ArchivePrivileges withUserDirectory(boolean needed) {
        return new ArchivePrivileges(checked, anyDatabase, cluster, needed);
    }

    /** What the data plane needs and the user lacks, each naming the role that grants it; empty when nothing is missing. */
    public List<String> missing() {
        List<String> missing = new ArrayList<>();
        if (!checked) {
            return missing;
        }
        List<String> data = DATA_ACTIONS.stream().filter(a -> !anyDatabase.contains(a)).toList();
        if (!data.isEmpty()) {
            missing.add(String.join(", ", data) + " on every database (grant readWriteAnyDatabase)");
        }
        List<String> clusterActions = CLUSTER_ACTIONS.stream().filter(a -> !cluster.contains(a)).toList();
        if (!clusterActions.isEmpty()) {
            missing.add(String.join(", ", clusterActions) + " on the cluster (grant readWriteAnyDatabase)");
        }
        List<String> directory = USER_DIRECTORY_ACTIONS.stream().filter(a -> !anyDatabase.contains(a)).toList();
        if (userDirectory && !directory.isEmpty()) {
            missing.add(String.join(", ", directory) + " on every database (the proxy reads the archive's users with this"
                    + " user since spec.auth.users names archive: grant a role with these actions on {db: \"\", collection: \"\"},"
                    + " see docs/security.md)");
        }
        return missing;
    }
}
