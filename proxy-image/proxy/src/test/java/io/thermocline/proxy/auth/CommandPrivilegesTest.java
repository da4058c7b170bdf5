package io.thermocline.proxy.auth;

import io.thermocline.security.roles.BuiltinRoles;
import io.thermocline.security.roles.Privileges;
import io.thermocline.security.roles.RoleName;
import io.thermocline.security.roles.Target;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(10)
class CommandPrivilegesTest {

    private static List<String> needs(String json) {
        return CommandPrivileges.of("shop", BsonDocument.parse(json)).stream().map(n -> n.target() + ":" + n.action()).toList();
    }

    @Test
    void pipelinesNeedEveryNamespaceTheyNameAtAnyDepth() {
        assertThat(needs("""
                {aggregate: "orders", pipeline: [
                  {$lookup: {from: "customers", as: "c", pipeline: [{$unionWith: {coll: "archived", pipeline: [
                     {$graphLookup: {from: "tree", startWith: 1, connectFromField: "a", connectToField: "b", as: "t"}}]}}]}},
                  {$facet: {x: [{$lookup: {from: {db: "crm", coll: "people"}, as: "p", pipeline: []}}], y: [{$unionWith: "extra"}]}},
                  {$merge: {into: {db: "reports", coll: "daily"}}}]}"""))
                .containsExactly("shop.orders:find", "shop.customers:find", "shop.archived:find", "shop.tree:find",
                        "crm.people:find", "shop.extra:find", "reports.daily:insert", "reports.daily:update");
        assertThat(needs("{aggregate: 'orders', pipeline: [{$match: {}}, {$out: 'copy'}]}"))
                .containsExactly("shop.orders:find", "shop.copy:insert", "shop.copy:remove");
        assertThat(needs("{aggregate: 'orders', pipeline: [{$changeStream: {}}]}")).containsExactly("shop.orders:changeStream", "shop.orders:find");
        assertThat(needs("{aggregate: 1, pipeline: [{$currentOp: {}}]}")).containsExactly("cluster:inprog");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{find: 'orders', filter: {}}                                   | shop.orders:find",
            "{insert: 'orders'}                                             | shop.orders:insert",
            "{update: 'orders', updates: [{q: {}, u: {}, upsert: true}]}    | shop.orders:update,shop.orders:insert",
            "{update: 'orders', updates: [{q: {}, u: {}}]}                  | shop.orders:update",
            "{delete: 'orders', deletes: []}                                | shop.orders:remove",
            "{findAndModify: 'orders', remove: true}                        | shop.orders:find,shop.orders:remove",
            "{findAndModify: 'orders', update: {}, upsert: true}            | shop.orders:find,shop.orders:update,shop.orders:insert",
            "{getMore: 1, collection: 'orders'}                             | ''",
            "{killCursors: 'orders', cursors: [1]}                          | ''",
            "{listCollections: 1}                                           | shop:listCollections",
            "{listDatabases: 1}                                             | ''",
            "{explain: {count: 'orders'}}                                   | shop.orders:find",
            "{create: 'v', viewOn: 'orders', pipeline: []}                  | shop.v:createCollection,shop.orders:find",
            "{renameCollection: 'shop.a', to: 'shop.b'}                     | shop.a:renameCollectionSameDB,shop.b:renameCollectionSameDB",
            "{frobnicate: 1}                                                | cluster:anyAction",
            "{ping: 1}                                                      | ''",
    })
    void eachCommandNeedsWhatMongodChecks(String command, String expected) {
        List<String> want = expected.isEmpty() ? List.of() : List.of(expected.split(","));
        assertThat(needs(command)).containsExactlyElementsOf(want);
    }

    /** Issue 25 item 2: a whole database's stream needs the database, the cluster's every database (anyNormalResource). */
    @Test
    void changeStreamsOnADatabaseOrTheClusterNeedWhatMongodRequires() {
        assertThat(needs("{aggregate: 1, pipeline: [{$changeStream: {}}]}")).containsExactly("shop:changeStream", "shop:find");
        assertThat(CommandPrivileges.of("admin", BsonDocument.parse("{aggregate: 1, pipeline: [{$changeStream: {allChangesForCluster: true}}]}"))
                .stream().map(n -> n.target() + ":" + n.action()).toList())
                .containsExactly("any database:changeStream", "any database:find");
        Privileges readAdmin = BuiltinRoles.privileges(new RoleName("read", "admin")).orElseThrow();
        Privileges readAny = BuiltinRoles.privileges(new RoleName("readAnyDatabase", "admin")).orElseThrow();
        Target cluster = new Target.AnyDatabase();
        assertThat(readAdmin.allows(cluster, "changeStream")).as("read on admin is not every database").isFalse();
        assertThat(readAny.allows(cluster, "changeStream")).isTrue();
        assertThat(readAny.allows(cluster, "find")).isTrue();
        assertThat(BuiltinRoles.privileges(new RoleName("read", "shop")).orElseThrow().allows(new Target.Database("shop"), "changeStream")).isTrue();
    }

    /** Issue 25 item 3: boolean fields as mongod reads them (a non-zero number is true), in the one place (MongoBooleans). */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{findAndModify: 'orders', remove: 1}                           | shop.orders:find,shop.orders:remove",
            "{findAndModify: 'orders', remove: 1.5}                         | shop.orders:find,shop.orders:remove",
            "{findAndModify: 'orders', remove: {$numberLong: '1'}}          | shop.orders:find,shop.orders:remove",
            "{findAndModify: 'orders', remove: {$numberDecimal: '1'}}       | shop.orders:find,shop.orders:remove",
            "{findAndModify: 'orders', remove: 0, update: {}}               | shop.orders:find,shop.orders:update",
            "{findAndModify: 'orders', remove: null, update: {}}            | shop.orders:find,shop.orders:update",
            "{findAndModify: 'orders', remove: 'yes'}                       | shop.orders:find,shop.orders:remove",
            "{findAndModify: 'orders', update: {}, upsert: 1}               | shop.orders:find,shop.orders:update,shop.orders:insert",
            "{update: 'orders', updates: [{q: {}, u: {}, upsert: 1}]}       | shop.orders:update,shop.orders:insert",
            "{update: 'orders', updates: [{q: {}, u: {}, upsert: 0}]}       | shop.orders:update",
    })
    void booleanFieldsAreReadAsMongodReadsThem(String command, String expected) {
        assertThat(needs(command)).containsExactlyElementsOf(List.of(expected.split(",")));
    }

    /** Issue 25 item 5: commands that name another database or every user's sessions are checked there. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "{dataSize: 'crm.people'}                                                | crm.people:find",
            "{dataSize: 1}                                                           | cluster:anyAction",
            "{explain: {find: 'people', $db: 'crm'}}                                 | crm.people:find",
            "{explain: {find: 'orders'}}                                             | shop.orders:find",
            "{explain: {find: 'people', $db: 1}}                                     | shop.people:find,cluster:anyAction",
            "{aggregate: 1, pipeline: [{$listLocalSessions: {allUsers: true}}]}      | cluster:listSessions",
            "{aggregate: 1, pipeline: [{$listLocalSessions: {}}]}                    | cluster:listSessions",
            "{aggregate: 'system.sessions', pipeline: [{$listSessions: {}}]}         | cluster:listSessions",
    })
    void commandsNamingAnotherDatabaseOrEveryUsersSessionsAreCheckedThere(String command, String expected) {
        assertThat(needs(command)).containsExactlyElementsOf(List.of(expected.split(",")));
    }

    @Test
    void builtinRolesGrantWhatTheManualSays() {
        Privileges read = BuiltinRoles.privileges(new RoleName("read", "shop")).orElseThrow();
        assertThat(read.allows(new Target.Collection("shop", "orders"), "find")).isTrue();
        assertThat(read.allows(new Target.Collection("shop", "orders"), "insert")).isFalse();
        assertThat(read.allows(new Target.Collection("crm", "orders"), "find")).isFalse();
        assertThat(read.allows(new Target.Collection("shop", "system.users"), "find")).isFalse();
        Privileges any = BuiltinRoles.privileges(new RoleName("readWriteAnyDatabase", "admin")).orElseThrow();
        assertThat(any.allows(new Target.Collection("crm", "x"), "update")).isTrue();
        assertThat(any.allows(new Target.Cluster(), "listDatabases")).isTrue();
        assertThat(any.allows(new Target.Cluster(), "serverStatus")).isFalse();
        Privileges monitor = BuiltinRoles.privileges(new RoleName("clusterMonitor", "admin")).orElseThrow();
        assertThat(monitor.allows(new Target.Cluster(), "serverStatus")).isTrue();
        assertThat(monitor.allows(new Target.Collection("shop", "orders"), "find")).isFalse();
        Privileges root = BuiltinRoles.privileges(new RoleName("root", "admin")).orElseThrow();
        assertThat(root.allows(new Target.Collection("shop", "orders"), "remove")).isTrue();
        assertThat(root.allows(new Target.Cluster(), CommandPrivileges.UNKNOWN_ACTION)).isFalse();
        assertThat(BuiltinRoles.privileges(new RoleName("root", "shop"))).isEmpty();
    }
}
