package io.thermocline.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.proxy.server.ProxyServer;
import io.thermocline.proxy.server.ProxySettings;
import io.thermocline.proxy.tiered.TierPair;
import io.thermocline.proxy.tiered.TieredProxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The command x role table (auth/command-roles.table) through the wire, as mongod's own authorization tests run
 * commands_lib.js: one tiered proxy with {@code auth.mode: required} in front of a fast tier and an archive, one user
 * per built-in role (per-database roles on db1, the others on admin) and per custom role, each logged in once with
 * SCRAM and running every row on its connection. A row's users must get any answer but 13, every other user exactly
 * 13 Unauthorized. Commands that would change the tiers (drop, shutdown, replSetStepDown ...) fail at the backend by
 * the failCommand fail point, so only the proxy's decision is observed.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CommandRoleWireTest {
    /** Per-database roles on db1, the AnyDatabase and cluster roles on admin; custom roles as commands_lib's privileges. */
    static final String USERS = """
            users:
              - {user: read, db: admin, password: pw, roles: [{role: read, db: db1}]}
              - {user: readWrite, db: admin, password: pw, roles: [{role: readWrite, db: db1}]}
              - {user: dbAdmin, db: admin, password: pw, roles: [{role: dbAdmin, db: db1}]}
              - {user: userAdmin, db: admin, password: pw, roles: [{role: userAdmin, db: db1}]}
              - {user: dbOwner, db: admin, password: pw, roles: [{role: dbOwner, db: db1}]}
              - {user: readAnyDatabase, db: admin, password: pw, roles: [readAnyDatabase]}
              - {user: readWriteAnyDatabase, db: admin, password: pw, roles: [readWriteAnyDatabase]}
              - {user: dbAdminAnyDatabase, db: admin, password: pw, roles: [dbAdminAnyDatabase]}
              - {user: userAdminAnyDatabase, db: admin, password: pw, roles: [userAdminAnyDatabase]}
              - {user: clusterMonitor, db: admin, password: pw, roles: [clusterMonitor]}
              - {user: clusterManager, db: admin, password: pw, roles: [clusterManager]}
              - {user: hostManager, db: admin, password: pw, roles: [hostManager]}
              - {user: clusterAdmin, db: admin, password: pw, roles: [clusterAdmin]}
              - {user: root, db: admin, password: pw, roles: [root]}
              - {user: findOnFoo, db: admin, password: pw, roles: [findOnFoo]}
              - {user: writeOnFoo, db: admin, password: pw, roles: [writeOnFoo]}
              - {user: changeStreamOnFoo, db: admin, password: pw, roles: [changeStreamOnFoo]}
              - {user: systemProfileFind, db: admin, password: pw, roles: [systemProfileFind]}
              - {user: inprog, db: admin, password: pw, roles: [inprog]}
              - {user: killop, db: admin, password: pw, roles: [killop]}
              - {user: viewEditor, db: admin, password: pw, roles: [viewEditor]}
            roles:
              - {role: findOnFoo, db: admin, privileges: [{resource: {db: db1, collection: foo}, actions: [find]}]}
              - {role: writeOnFoo, db: admin, privileges: [{resource: {db: db1, collection: foo}, actions: [insert, update, remove]}]}
              - {role: changeStreamOnFoo, db: admin, privileges: [{resource: {db: db1, collection: foo}, actions: [changeStream]},
                  {resource: {db: db1, collection: ''}, actions: [changeStream]}]}
              - {role: systemProfileFind, db: admin, privileges: [{resource: {db: db1, collection: system.profile}, actions: [find]}]}
              - {role: inprog, db: admin, privileges: [{resource: {cluster: true}, actions: [inprog]}]}
              - {role: killop, db: admin, privileges: [{resource: {cluster: true}, actions: [killop]}]}
              - {role: viewEditor, db: admin, privileges: [{resource: {db: db1, collection: view}, actions: [collMod, find]}]}
            """;
    /** Commands that would change the tiers: the backends refuse them (BadValue) once the proxy has let them through. */
    private static final List<String> STOPPED_AT_THE_BACKEND = List.of(
            "drop",
            "dropIndexes",
            "deleteIndexes",
            "reIndex",
            "collMod",
            "compact",
            "convertToCapped",
            "cloneCollectionAsCapped",
            "renameCollection",
            "dropDatabase",
            "createUser",
            "updateUser",
            "dropUser",
            "dropAllUsersFromDatabase",
            "createRole",
            "updateRole",
            "dropRole",
            "dropAllRolesFromDatabase",
            "grantRolesToUser",
            "revokeRolesFromUser",
            "grantRolesToRole",
            "revokeRolesFromRole",
            "grantPrivilegesToRole",
            "revokePrivilegesFromRole",
            "invalidateUserCache",
            "setParameter",
            "fsync",
            "fsyncUnlock",
            "logRotate",
            "shutdown",
            "killAllSessions",
            "killAllSessionsByPattern",
            "killSessions",
            "setDefaultRWConcern",
            "setFeatureCompatibilityVersion",
            "appendOplogNote",
            "replSetStepDown",
            "replSetFreeze",
            "replSetReconfig",
            "killOp",
            "profile");
    /** Commands that change who is logged in run on a connection of their own. */
    private static final Set<String> CHANGE_THE_LOGIN = Set.of("logout", "saslStart", "saslContinue", "authenticate");
    /** The one tiered collection: a write there would make the connection's later archive reads wait for a feeder. */
    private static final String TIERED = "tiered";

    private static final int UNAUTHORIZED = 13;

    private static TierPair tiers;
    private static ProxyServer proxy;
    private static Path usersFile;

    @BeforeAll
    static void start() throws Exception {
        tiers = TierPair.embedded();
        for (String uri : List.of(tiers.fastUri(), tiers.archiveUri())) {
            try (MongoClient direct = MongoClients.create(uri)) {
                direct.getDatabase("admin")
                        .runCommand(new Document("configureFailPoint", "failCommand")
                                .append("mode", "alwaysOn")
                                .append(
                                        "data",
                                        new Document("failCommands", STOPPED_AT_THE_BACKEND).append("errorCode", 2)));
            }
        }
        usersFile = Files.createTempFile("thermocline-role-table", ".yaml");
        Files.writeString(usersFile, USERS);
        String yaml = "proxy:\n  listenHost: 127.0.0.1\n  port: 0\n  httpHost: 127.0.0.1\n  httpPort: 0\n"
                // no feeder runs: archive reads wait only for what their own session wrote
                + "  readConsistency: session\n"
                + "tiers:\n  fast:\n    uri: " + tiers.fastUri() + "\n    connectionBudget: 8\n"
                + "  archive:\n    uri: " + tiers.archiveUri() + "\n    connectionBudget: 8\n"
                + "fleet:\n  instanceId: role-table-0\n"
                + "collections:\n  - {database: db2, collection: " + TIERED + ", ageField: createdAt, hotWindow: 1h}\n"
                + "auth:\n  mode: required\n  users: [file]\n  usersFile: '" + usersFile + "'\n"
                + "  failedLoginDelay: 0s\n  maxFailedLoginDelay: 0s\n";
        ThermoclineConfig config = ConfigLoader.parse(yaml, Map.of());
        ProxySettings settings = ProxySettings.from(config)
                .withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofMillis(200));
        proxy = ProxyServer.create(config, settings, TieredProxy.Options.defaults())
                .start();
    }

    @AfterAll
    static void stop() throws Exception {
        if (proxy != null) {
            proxy.close();
        }
        if (tiers != null) {
            tiers.close();
        }
        if (usersFile != null) {
            Files.deleteIfExists(usersFile);
        }
    }

    @Test
    void everyUserIsAuthorizedForExactlyTheRowsThatNameIt() throws Exception {
        CommandRoleRows table = CommandRoleRows.load();
        Set<String> users = users();
        assertThat(users)
                .as("the users the table names are the users logged in")
                .containsAll(table.namedUsers());
        List<String> disagreements = new ArrayList<>();
        for (String user : users) {
            try (WireClient connection = new WireClient(proxy.port()).login(user, "pw")) {
                for (CommandRoleRows.Row row : table.rows()) {
                    BsonDocument reply =
                            ownConnection(row) ? onItsOwnConnection(user, row) : run(connection, user, row);
                    boolean refused =
                            reply.getNumber("code", new org.bson.BsonInt32(0)).intValue() == UNAUTHORIZED;
                    boolean expected = row.proxy().contains(user);
                    if (refused == expected) {
                        disagreements.add(row + " as " + user + ": "
                                + (expected ? "refused, expected authorized" : "authorized, expected 13") + " -> "
                                + reply.toJson());
                    }
                }
            }
        }
        assertThat(disagreements)
                .as(disagreements.size() + " disagreements with the table (rows x " + users.size() + " users)")
                .isEmpty();
    }

    /** As mongod: names only the collections the user holds a privilege on; system.* ones only when a privilege names them. */
    @Test
    void listingOwnCollectionsShowsOnlyThoseTheUserHoldsAPrivilegeOn() throws Exception {
        try (WireClient root = new WireClient(proxy.port()).login("root", "pw")) {
            for (String collection : List.of("foo", "bar")) {
                assertThat(root.command(BsonDocument.parse(
                                        "{insert: '" + collection + "', documents: [{a: 1}], $db: 'db1'}"))
                                .body()
                                .getNumber("ok")
                                .intValue())
                        .isEqualTo(1);
            }
        }
        assertThat(ownCollections("findOnFoo")).containsExactly("foo");
        assertThat(ownCollections("read"))
                .contains("foo", "bar")
                .allMatch(name -> !name.startsWith("system.") || name.equals("system.js"));
        assertThat(ownCollections("clusterMonitor")).contains("foo", "bar");
        assertThat(ownCollections("inprog"))
                .as("a user with no privilege in db1 is refused")
                .isNull();
    }

    /** The collection names {@code user} lists in db1 with nameOnly and authorizedCollections; null when refused with 13. */
    private static List<String> ownCollections(String user) throws Exception {
        try (WireClient connection = new WireClient(proxy.port()).login(user, "pw")) {
            BsonDocument reply = connection
                    .command(
                            BsonDocument.parse(
                                    "{listCollections: 1, nameOnly: true, authorizedCollections: true, cursor: {batchSize: 1}, $db: 'db1'}"))
                    .body();
            if (reply.getNumber("code", new org.bson.BsonInt32(0)).intValue() == UNAUTHORIZED) {
                return null;
            }
            assertThat(reply.getDocument("cursor").getNumber("id").longValue())
                    .as("every name in the first batch")
                    .isZero();
            return reply.getDocument("cursor").getArray("firstBatch").stream()
                    .map(d -> d.asDocument().getString("name").getValue())
                    .sorted()
                    .toList();
        }
    }

    private static boolean ownConnection(CommandRoleRows.Row row) {
        return CHANGE_THE_LOGIN.contains(row.name()) || row.command().contains("'" + TIERED + "'");
    }

    private static BsonDocument onItsOwnConnection(String user, CommandRoleRows.Row row) throws Exception {
        try (WireClient own = new WireClient(proxy.port()).login(user, "pw")) {
            return run(own, user, row);
        }
    }

    private static BsonDocument run(WireClient connection, String user, CommandRoleRows.Row row) throws Exception {
        try {
            return connection
                    .command(row.body(user).append("$db", new BsonString(row.db())))
                    .body();
        } catch (java.io.IOException e) {
            throw new AssertionError(row + " as " + user + ": no answer", e);
        }
    }

    private static Set<String> users() {
        Set<String> users = new TreeSet<>();
        for (String line : USERS.split("\n")) {
            int at = line.indexOf("{user: ");
            if (at >= 0) {
                users.add(line.substring(at + 7, line.indexOf(',', at)));
            }
        }
        return users;
    }
}
