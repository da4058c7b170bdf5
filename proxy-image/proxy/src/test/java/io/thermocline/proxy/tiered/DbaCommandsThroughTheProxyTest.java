package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** serverStatus through a tiered proxy shows both tiers, the archive's answer staying at the top level. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DbaCommandsThroughTheProxyTest {

    @Test
    void serverStatusHasASectionPerTier() throws Exception {
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(20), Duration.ofMillis(20))) {
            Document status = stack.client.getDatabase("admin").runCommand(new Document("serverStatus", 1));
            String archiveSet = setName(stack.archiveDirect.getDatabase("admin").runCommand(new Document("serverStatus", 1)));
            String fastSet = setName(stack.fastDirect.getDatabase("admin").runCommand(new Document("serverStatus", 1)));
            assertThat(fastSet).isNotEqualTo(archiveSet);
            assertThat(setName(status)).as("the top level is the archive's").isEqualTo(archiveSet);
            Document tiers = status.get("tiers", Document.class);
            assertThat(tiers).as(status.toJson()).isNotNull();
            assertThat(setName(tiers.get("fast", Document.class))).isEqualTo(fastSet);
            assertThat(setName(tiers.get("archive", Document.class))).isEqualTo(archiveSet);
        }
    }

    private static String setName(Document serverStatus) {
        return serverStatus.get("repl", Document.class).getString("setName");
    }
}
