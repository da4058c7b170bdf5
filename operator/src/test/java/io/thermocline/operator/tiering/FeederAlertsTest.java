package io.thermocline.operator.tiering;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Date;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** The feeder's health document as the data plane's {@code MetadataStore.saveFeederHealth} writes it, read by the operator. */
class FeederAlertsTest {

    @Test
    void anArchiveOutageTheFeederReportsIsReadWithWhySinceAndCause() {
        Instant since = Instant.parse("2026-12-07T21:00:00Z");
        Document health = new Document("deadLetters", 0L)
                .append("oldestDeadLetter", null)
                .append("historyLost", null)
                .append(
                        "archiveUnavailable",
                        new Document("why", "stalled")
                                .append("since", Date.from(since))
                                .append("cause", "Timeout while receiving message"));
        TieringSnapshot.FeederAlerts alerts = MongoTieringObserver.alerts(health);
        assertThat(alerts.archiveUnavailable())
                .isEqualTo(new TieringSnapshot.ArchiveOutage("stalled", since, "Timeout while receiving message"));
        assertThat(alerts.deadLetters()).isZero();
        assertThat(alerts.resyncing()).isFalse();
    }

    @Test
    void noOutageWhileTheArchiveTakesTheFeedersWrites() {
        assertThat(MongoTieringObserver.alerts(new Document("deadLetters", 2L).append("archiveUnavailable", null))
                        .archiveUnavailable())
                .isNull();
        assertThat(MongoTieringObserver.alerts(null)).isEqualTo(TieringSnapshot.FeederAlerts.NONE);
    }
}
