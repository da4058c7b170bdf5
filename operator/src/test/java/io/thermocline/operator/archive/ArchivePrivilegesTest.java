package io.thermocline.operator.archive;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** connectionStatus privileges against what the data plane needs of the archive user. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ArchivePrivilegesTest {

    private static final List<String> READ_WRITE = List.of("find", "insert", "update", "remove", "listCollections",
            "listIndexes", "createCollection", "createIndex", "dropCollection", "dropIndex", "killCursors", "changeStream");

    @Test
    void readWriteAnyDatabaseWithViewUserAndViewRoleLacksNothing() {
        ArchivePrivileges p = ArchivePrivileges.from(status(anyDatabase(READ_WRITE), anyDatabase(List.of("viewUser", "viewRole")),
                cluster(List.of("listDatabases", "serverStatus"))));
        assertThat(p.checked()).isTrue();
        assertThat(p.missing()).isEmpty();
    }

    @Test
    void withoutViewUserTheMissingActionsAndTheirReasonAreNamed() {
        ArchivePrivileges p = ArchivePrivileges.from(status(anyDatabase(READ_WRITE), cluster(List.of("listDatabases"))));
        assertThat(p.missing()).singleElement().asString().startsWith("viewUser, viewRole on every database")
                .contains("spec.auth.users names archive");
        assertThat(p.withUserDirectory(false).missing()).as("users from a file only").isEmpty();
    }

    @Test
    void privilegesOnOneDatabaseDoNotCountForEveryDatabase() {
        Document shopOnly = new Document("resource", new Document("db", "shop").append("collection", ""))
                .append("actions", READ_WRITE);
        ArchivePrivileges p = ArchivePrivileges.from(status(shopOnly));
        assertThat(p.missing()).hasSize(3);
        assertThat(p.missing().get(0)).startsWith("find, insert, update, remove").endsWith("(grant readWriteAnyDatabase)");
        assertThat(p.missing().get(1)).startsWith("listDatabases on the cluster");
    }

    @Test
    void anyResourceGrantsEverything() {
        Document root = new Document("resource", new Document("anyResource", true))
                .append("actions", List.of("find", "insert", "update", "remove", "listCollections", "listIndexes",
                        "createCollection", "createIndex", "dropCollection", "dropIndex", "killCursors", "viewUser", "viewRole",
                        "listDatabases"));
        assertThat(ArchivePrivileges.from(status(root)).missing()).isEmpty();
    }

    @Test
    void anArchiveWithoutAccessControlIsNotChecked() {
        Document open = new Document("authInfo", new Document("authenticatedUsers", List.of())
                .append("authenticatedUserPrivileges", List.of()));
        ArchivePrivileges p = ArchivePrivileges.from(open);
        assertThat(p.checked()).isFalse();
        assertThat(p.missing()).isEmpty();
    }

    private static Document anyDatabase(List<String> actions) {
        return new Document("resource", new Document("db", "").append("collection", "")).append("actions", actions);
    }

    private static Document cluster(List<String> actions) {
        return new Document("resource", new Document("cluster", true)).append("actions", actions);
    }

    private static Document status(Document... privileges) {
        return new Document("authInfo", new Document("authenticatedUsers",
                List.of(new Document("user", "app").append("db", "admin")))
                .append("authenticatedUserPrivileges", List.of(privileges)));
    }
}
