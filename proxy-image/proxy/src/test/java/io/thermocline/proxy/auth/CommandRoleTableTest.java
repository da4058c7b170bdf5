package io.thermocline.proxy.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.security.roles.BuiltinRoles;
import io.thermocline.security.roles.Privileges;
import io.thermocline.security.roles.RoleName;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Commands x built-in roles, as mongod's own authorization tests (jstests/auth/lib/commands_lib.js) lay them out:
 * per-database roles are granted on {@code db1} only, the AnyDatabase and cluster roles on {@code admin}; each row
 * lists exactly the roles that may run the command on that database (read from mongod's tests and manual), and
 * every other role must be refused by {@link CommandPrivileges} over {@link BuiltinRoles}.
 */
@Timeout(10)
class CommandRoleTableTest {
    private static final Map<String, Privileges> ROLES = new LinkedHashMap<>();

    static {
        for (String r : new String[] {"read", "readWrite", "dbAdmin", "userAdmin", "dbOwner"}) {
            ROLES.put(r, BuiltinRoles.privileges(new RoleName(r, "db1")).orElseThrow());
        }
        for (String r : new String[] {
            "readAnyDatabase",
            "readWriteAnyDatabase",
            "dbAdminAnyDatabase",
            "userAdminAnyDatabase",
            "clusterMonitor",
            "clusterManager",
            "clusterAdmin",
            "root"
        }) {
            ROLES.put(r, BuiltinRoles.privileges(new RoleName(r, "admin")).orElseThrow());
        }
    }

    private static boolean allowed(Privileges p, String db, BsonDocument command) {
        return CommandPrivileges.of(db, command).stream().allMatch(n -> allowed(p, n));
    }

    private static boolean allowed(Privileges p, CommandPrivileges.Need n) {
        if (n.onlyIf() != null && !allowed(p, n.onlyIf())) {
            return true;
        }
        boolean one = !n.action().equals(CommandPrivileges.UNKNOWN_ACTION) && p.allows(n.target(), n.action());
        return one || (n.orElse() != null && allowed(p, n.orElse()));
    }

    @ParameterizedTest(name = "{0} on {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "{find: 'x'}                                             | db1   | read readWrite dbOwner readAnyDatabase readWriteAnyDatabase root",
                "{find: 'x'}                                             | db2   | readAnyDatabase readWriteAnyDatabase root",
                "{count: 'x'}                                            | db1   | read readWrite dbOwner readAnyDatabase readWriteAnyDatabase root",
                "{aggregate: 'foo', pipeline: []}                        | db1   | read readWrite dbOwner readAnyDatabase readWriteAnyDatabase root",
                "{aggregate: 'foo', pipeline: [{$out: 'foo_out'}]}       | db1   | readWrite dbOwner readWriteAnyDatabase root",
                "{aggregate: 'foo', pipeline: [{$out: 'foo_out'}]}       | db2   | readWriteAnyDatabase root",
                "{insert: 'x', documents: []}                            | db1   | readWrite dbOwner readWriteAnyDatabase root",
                "{findAndModify: 'x', remove: 1}                         | db1   | readWrite dbOwner readWriteAnyDatabase root",
                "{create: 'x'}                                           | db1   | readWrite dbAdmin dbOwner readWriteAnyDatabase dbAdminAnyDatabase root",
                "{dataSize: 'db1.x'}                                     | db1   | read readWrite dbOwner readAnyDatabase readWriteAnyDatabase root",
                "{dataSize: 'db2.x'}                                     | db2   | readAnyDatabase readWriteAnyDatabase root",
                "{dataSize: 'db2.x'}                                     | db1   | readAnyDatabase readWriteAnyDatabase root",
                "{lockInfo: 1}                                           | admin | clusterMonitor clusterAdmin root",
                "{serverStatus: 1}                                       | admin | clusterMonitor clusterAdmin root",
                "{dropDatabase: 1}                                       | db1   | dbAdmin dbOwner dbAdminAnyDatabase clusterAdmin root",
                "{createUser: 'u', pwd: 'p', roles: []}                  | db1   | userAdmin dbOwner userAdminAnyDatabase root",
                "{aggregate: 1, pipeline: [{$changeStream: {allChangesForCluster: true}}]} | admin | readAnyDatabase readWriteAnyDatabase root",
                "{aggregate: 1, pipeline: [{$changeStream: {}}]}         | db1   | read readWrite dbOwner readAnyDatabase readWriteAnyDatabase root",
                "{aggregate: 1, pipeline: [{$listLocalSessions: {allUsers: true}}]} | admin | clusterMonitor clusterManager clusterAdmin root",
            })
    void eachBuiltinRoleRunsExactlyTheCommandsMongodLetsItRun(String command, String db, String expected) {
        BsonDocument body = BsonDocument.parse(command);
        Set<String> want = new TreeSet<>(Arrays.asList(expected.trim().split("\\s+")));
        Set<String> got = ROLES.entrySet().stream()
                .filter(e -> allowed(e.getValue(), db, body))
                .map(Map.Entry::getKey)
                .collect(Collectors.toCollection(TreeSet::new));
        assertThat(got).as(command + " on " + db).isEqualTo(want);
    }
}
