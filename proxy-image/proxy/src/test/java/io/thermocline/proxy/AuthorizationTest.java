package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoWriteException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.model.Aggregates;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every command is checked against the logged-in user's privileges, pipelines' namespaces included. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AuthorizationTest {
    private static SecuredProxy secured;

    @BeforeAll
    static void start() throws Exception {
        secured = SecuredProxy.start();
        try (MongoClient root = client("root", "admin", "root-pw")) {
            root.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 1).append("customer", 7));
            root.getDatabase("shop").getCollection("customers").insertOne(new Document("_id", 7).append("name", "Ada"));
            root.getDatabase("crm").getCollection("secrets").insertOne(new Document("_id", 7));
        }
    }

    @AfterAll
    static void stop() throws Exception {
        secured.close();
    }

    private static MongoClient client(String user, String db, String password) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(secured.uri("", "?serverSelectionTimeoutMS=5000&retryWrites=false")))
                .credential(MongoCredential.createCredential(user, db, password.toCharArray())).build());
    }

    private static void assertUnauthorized(Runnable command, String message) {
        assertThatThrownBy(command::run).satisfies(e -> {
            int code = e instanceof MongoWriteException w ? w.getCode() : ((MongoCommandException) e).getErrorCode();
            String text = e instanceof MongoWriteException w ? w.getError().getMessage() : ((MongoCommandException) e).getErrorMessage();
            assertThat(code).isEqualTo(13);
            assertThat(text).isEqualTo(message);
        });
    }

    @Test
    void aReadOnlyUserReadsButItsInsertGets13WithTheCommandAndNamespace() {
        try (MongoClient reader = client("reader", "shop", "reader-pw")) {
            assertThat(reader.getDatabase("shop").getCollection("orders").countDocuments()).isEqualTo(1);
            assertUnauthorized(() -> reader.getDatabase("shop").getCollection("orders").insertOne(new Document("_id", 2)),
                    "not authorized on shop to execute command { insert: \"orders\", $db: \"shop\" }");
            assertUnauthorized(() -> reader.getDatabase("crm").getCollection("secrets").find().first(),
                    "not authorized on crm to execute command { find: \"secrets\", $db: \"crm\" }");
            Document status = reader.getDatabase("admin").runCommand(new Document("connectionStatus", 1));
            assertThat(status.get("authInfo", Document.class).getList("authenticatedUserRoles", Document.class))
                    .containsExactly(new Document("role", "read").append("db", "shop"));
        }
    }

    @Test
    void aLookupIntoACollectionTheUserCannotReadGets13() {
        try (MongoClient reader = client("reader", "shop", "reader-pw")) {
            List<Document> joined = reader.getDatabase("shop").getCollection("orders")
                    .aggregate(List.of(Aggregates.lookup("customers", "customer", "_id", "c"))).into(new java.util.ArrayList<>());
            assertThat(joined).hasSize(1);
            assertUnauthorized(() -> reader.getDatabase("shop").getCollection("orders").aggregate(List.of(
                    new Document("$lookup", new Document("from", new Document("db", "crm").append("coll", "secrets"))
                            .append("localField", "customer").append("foreignField", "_id").append("as", "s")))).first(),
                    "not authorized on crm to execute command { aggregate: \"orders\", $db: \"shop\" }");
            assertUnauthorized(() -> reader.getDatabase("shop").getCollection("orders").aggregate(List.of(
                    new Document("$facet", new Document("x", List.of(new Document("$out", "copy")))))).first(),
                    "not authorized on shop to execute command { aggregate: \"orders\", $db: \"shop\" }");
        }
    }

    @Test
    void customRolesGrantTheirOwnAndInheritedPrivilegesOnly() {
        try (MongoClient reporter = client("reporter", "admin", "reporter-pw")) {
            assertThat(reporter.getDatabase("shop").getCollection("orders").countDocuments()).isEqualTo(1); // inherited
            reporter.getDatabase("shop").getCollection("reports").insertOne(new Document("day", 1));           // own
            assertUnauthorized(() -> reporter.getDatabase("shop").getCollection("customers").find().first(),
                    "not authorized on shop to execute command { find: \"customers\", $db: \"shop\" }");
            assertUnauthorized(() -> reporter.getDatabase("shop").getCollection("orders").deleteMany(new Document()),
                    "not authorized on shop to execute command { delete: \"orders\", $db: \"shop\" }");
        }
    }

    @Test
    void clusterCommandsAndUnknownCommandsNeedTheirPrivilegesAndRootHasThem() {
        try (MongoClient alice = client("alice", "admin", "alice-pw"); MongoClient root = client("root", "admin", "root-pw")) {
            assertUnauthorized(() -> alice.getDatabase("admin").runCommand(new Document("serverStatus", 1)),
                    "not authorized on admin to execute command { serverStatus: 1, $db: \"admin\" }");
            assertUnauthorized(() -> alice.getDatabase("shop").runCommand(new Document("frobnicate", 1)),
                    "not authorized on admin to execute command { frobnicate: 1, $db: \"shop\" }");
            // issue 25 item 11: a denial never echoes a payload, such as eval's JavaScript
            assertUnauthorized(() -> alice.getDatabase("shop").runCommand(new Document("eval", "function() { return 'secret-token'; }")),
                    "not authorized on admin to execute command { eval: ..., $db: \"shop\" }");
            assertThat(root.getDatabase("admin").runCommand(new Document("serverStatus", 1)).get("ok")).isEqualTo(1.0);
            // Root may send commands the proxy does not model: the archive answers them.
            assertThatThrownBy(() -> root.getDatabase("shop").runCommand(new Document("frobnicate", 1)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isNotEqualTo(13));
            // Every user may read itself.
            assertThat(alice.getDatabase("admin").runCommand(new Document("usersInfo", "alice")).get("ok")).isEqualTo(1.0);
        }
    }

    @Test
    void aCursorIsContinuedAndKilledOnlyByTheUserThatOpenedIt() {
        try (MongoClient alice = client("alice", "admin", "alice-pw"); MongoClient reporter = client("reporter", "admin", "reporter-pw");
             MongoClient root = client("root", "admin", "root-pw")) {
            root.getDatabase("shop").getCollection("reports").insertMany(List.of(new Document("day", 10), new Document("day", 11),
                    new Document("day", 12)));
            long first = openCursor(alice);
            // reporter may read shop.reports, but not alice's cursor on it
            // another user's session is another session: mongod refuses at the session check (GetMoreSessionTest has the details)
            assertThatThrownBy(() -> reporter.getDatabase("shop").runCommand(new Document("getMore", first).append("collection", "reports").append("batchSize", 1)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(13);
                        assertThat(e.getErrorMessage()).startsWith("Cursor session id (").contains("is not the same as the operation context's session id");
                    });
            assertUnauthorized(() -> reporter.getDatabase("shop").runCommand(new Document("killCursors", "reports").append("cursors", List.of(first))),
                    "not authorized to kill cursor on shop.reports");
            Document batch = alice.getDatabase("shop").runCommand(new Document("getMore", first).append("collection", "reports").append("batchSize", 1));
            assertThat(batch.get("cursor", Document.class).getList("nextBatch", Document.class)).hasSize(1);

            long second = openCursor(alice);
            // root holds killAnyCursor: it may kill anyone's cursor, as in mongod
            Document killed = root.getDatabase("shop").runCommand(new Document("killCursors", "reports").append("cursors", List.of(second)));
            assertThat(killed.getList("cursorsKilled", Long.class)).containsExactly(second);
            assertThatThrownBy(() -> alice.getDatabase("shop").runCommand(new Document("getMore", second).append("collection", "reports").append("batchSize", 1)))
                    .isInstanceOfSatisfying(MongoCommandException.class, e -> assertThat(e.getErrorCode()).isEqualTo(43));
        }
    }

    @Test
    void listDatabasesShowsEachUserTheDatabasesItHoldsPrivilegesIn() {
        try (MongoClient reader = client("reader", "shop", "reader-pw"); MongoClient root = client("root", "admin", "root-pw");
             MongoClient alice = client("alice", "admin", "alice-pw")) {
            assertThat(reader.listDatabaseNames().into(new java.util.ArrayList<>())).containsExactly("shop");
            Document nameOnly = reader.getDatabase("admin").runCommand(new Document("listDatabases", 1).append("nameOnly", true));
            assertThat(nameOnly.getList("databases", Document.class)).extracting(d -> d.getString("name")).containsExactly("shop");
            // root holds listDatabases: every database, crm included
            assertThat(root.listDatabaseNames().into(new java.util.ArrayList<>())).contains("shop", "crm");
            assertUnauthorized(() -> alice.getDatabase("admin").runCommand(new Document("listDatabases", 1).append("authorizedDatabases", false)),
                    "Insufficient permissions to list all databases");
            assertThat(alice.getDatabase("admin").runCommand(new Document("listDatabases", 1).append("authorizedDatabases", true))
                    .getList("databases", Document.class)).extracting(d -> d.getString("name")).containsExactly("shop");
        }
    }

    private static long openCursor(MongoClient client) {
        Document reply = client.getDatabase("shop").runCommand(new Document("find", "reports").append("batchSize", 1));
        long id = reply.get("cursor", Document.class).getLong("id");
        assertThat(id).isNotZero();
        return id;
    }
}
