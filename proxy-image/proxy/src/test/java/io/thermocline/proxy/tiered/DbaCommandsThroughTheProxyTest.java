package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * serverStatus, replSetGetStatus and storage statistics through a tiered proxy show both tiers, the archive's answer
 * staying at the top level.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DbaCommandsThroughTheProxyTest {

    @Test
    void serverStatusHasASectionPerTier() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            Document status = stack.client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
            String archiveSet =
                    setName(stack.archiveDirect.getDatabase("admin").runCommand(new Document("serverStatus", 1)));
            String fastSet = setName(stack.fastDirect.getDatabase("admin").runCommand(new Document("serverStatus", 1)));
            assertThat(fastSet).isNotEqualTo(archiveSet);
            assertThat(setName(status)).as("the top level is the archive's").isEqualTo(archiveSet);
            Document tiers = status.get("tiers", Document.class);
            assertThat(tiers).as(status.toJson()).isNotNull();
            assertThat(setName(tiers.get("fast", Document.class))).isEqualTo(fastSet);
            assertThat(setName(tiers.get("archive", Document.class))).isEqualTo(archiveSet);
        }
    }

    @Test
    void replSetGetStatusShowsTheMembersOfBothTiers() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            Document status = stack.client.getDatabase("admin").runCommand(new Document("replSetGetStatus", 1));
            Document archive = stack.archiveDirect.getDatabase("admin").runCommand(new Document("replSetGetStatus", 1));
            Document fast = stack.fastDirect.getDatabase("admin").runCommand(new Document("replSetGetStatus", 1));
            assertThat(status.getString("set"))
                    .as("the top level is the archive's")
                    .isEqualTo(archive.getString("set"));
            Document tiers = status.get("tiers", Document.class);
            assertThat(tiers).as(status.toJson()).isNotNull();
            assertThat(tiers.get("fast", Document.class).getString("set")).isEqualTo(fast.getString("set"));
            assertThat(names(tiers.get("fast", Document.class)))
                    .isEqualTo(names(fast))
                    .isNotEmpty();
            assertThat(names(tiers.get("archive", Document.class)))
                    .isEqualTo(names(archive))
                    .isNotEmpty();
        }
    }

    @Test
    void storageStatisticsOfTieredDataCountEachDocumentOnce() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            // the archive holds every order, the fast tier copies of the two recent ones (as the feeder leaves them)
            java.util.List<Document> orders = new java.util.ArrayList<>();
            for (int i = 0; i < 5; i++) {
                orders.add(new Document("_id", i).append("createdAt", new java.util.Date()));
            }
            stack.archiveDirect.getDatabase("shop").getCollection("orders").insertMany(orders);
            stack.fastDirect.getDatabase("shop").getCollection("orders").insertMany(orders.subList(3, 5));

            Document dbStats = stack.client.getDatabase("shop").runCommand(new Document("dbStats", 1));
            Document tiers = dbStats.get("tiers", Document.class);
            assertThat(tiers).as(dbStats.toJson()).isNotNull();
            assertThat(((Number) tiers.get("fast", Document.class).get("objects")).longValue())
                    .isEqualTo(2);
            assertThat(((Number) dbStats.get("objects")).longValue())
                    .as("the archive's count, each document once")
                    .isEqualTo(5);
            Document archiveStats = stack.archiveDirect.getDatabase("shop").runCommand(new Document("dbStats", 1));
            Document fastStats = stack.fastDirect.getDatabase("shop").runCommand(new Document("dbStats", 1));
            assertThat(((Number) dbStats.get("indexSize")).longValue())
                    .as("both tiers' disk")
                    .isEqualTo(((Number) archiveStats.get("indexSize")).longValue()
                            + ((Number) fastStats.get("indexSize")).longValue());

            Document collStats = stack.client.getDatabase("shop").runCommand(new Document("collStats", "orders"));
            assertThat(((Number) collStats.get("count")).longValue())
                    .as(collStats.toJson())
                    .isEqualTo(5);
            assertThat(((Number) collStats
                                    .get("tiers", Document.class)
                                    .get("fast", Document.class)
                                    .get("count"))
                            .longValue())
                    .isEqualTo(2);

            Document untiered = stack.client.getDatabase("crm").runCommand(new Document("dbStats", 1));
            assertThat(untiered.containsKey("tiers"))
                    .as("a database without tiered data is the archive's alone")
                    .isFalse();

            Document databases = stack.client.getDatabase("admin").runCommand(new Document("listDatabases", 1));
            // the embedded tiers report no sizeOnDisk (TierStatisticsTest sums real ones): the list is the archive's
            assertThat(databases.getList("databases", Document.class).stream().map(d -> d.getString("name")))
                    .contains("shop");
        }
    }

    private static java.util.List<String> names(Document replSetGetStatus) {
        return replSetGetStatus.getList("members", Document.class).stream()
                .map(m -> m.getString("name"))
                .toList();
    }

    private static String setName(Document serverStatus) {
        return serverStatus.get("repl", Document.class).getString("setName");
    }
}
