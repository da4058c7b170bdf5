package io.thermocline.operator.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.mode.ModeStore.ModeReading;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Observed;
import java.time.Instant;
import java.util.Date;
import java.util.Optional;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The archive follower's document as the data plane writes it ({@code thermocline.state} {@code _id: "archiveFollower"}),
 * against the archive's latest optime: {@code status.mode.follower} and the {@code FollowerHealthy} condition.
 */
@Timeout(60)
class FollowerStatusTest {

    private static final Instant NOW = Instant.parse("2026-12-01T18:00:00Z");
    private static final int NOW_SECONDS = (int) NOW.getEpochSecond();

    @Test
    void aFollowerInStepShowsItsHolderAndLag() {
        ModeStatus s = status("Shadowing", follower("feeder-7f9c-1", 3, NOW.plusSeconds(8), NOW_SECONDS - 2, null), ts(NOW_SECONDS));
        assertThat(s.follower.running).isTrue();
        assertThat(s.follower.holder).isEqualTo("feeder-7f9c-1");
        assertThat(s.follower.term).isEqualTo(3L);
        assertThat(s.follower.leaseExpiresAt).isEqualTo("2026-12-01T18:00:08Z");
        assertThat(s.follower.appliedThrough).isEqualTo("2026-12-01T17:59:58Z");
        assertThat(s.follower.archiveLatest).isEqualTo("2026-12-01T18:00:00Z");
        assertThat(s.follower.lagSeconds).isEqualTo(2L);
        assertThat(s.follower.resync).isNull();
        Observed c = condition(s).orElseThrow();
        assertThat(c.status()).isEqualTo(Observed.Status.True);
        assertThat(c.reason()).isEqualTo("InStep");
    }

    @Test
    void aFollowerBehindTheBoundSaysWhyTheCutoverWaits() {
        ModeStatus s = status("Shadowing", follower("feeder-1", 3, NOW.plusSeconds(8), NOW_SECONDS - 61, null), ts(NOW_SECONDS));
        assertThat(s.follower.lagSeconds).isEqualTo(61L);
        Observed c = condition(s).orElseThrow();
        assertThat(c.status()).isEqualTo(Observed.Status.False);
        assertThat(c.reason()).isEqualTo("FollowerBehind");
        assertThat(c.message()).contains("61 s behind").contains("maxFollowerLagSeconds: 60").contains("holds a cutover to tiered back")
                .contains("shop-feeder");
        // at the bound it is still in step
        assertThat(condition(status("Shadowing", follower("feeder-1", 3, NOW.plusSeconds(8), NOW_SECONDS - 60, null), ts(NOW_SECONDS)))
                .orElseThrow().reason()).isEqualTo("InStep");
    }

    @Test
    void anExpiredLeaseIsAStoppedFollowerNamingTheLastHolder() {
        // a follower that stops cleanly expires its lease at once (expiresAt in the past): the holder is still named
        ModeStatus s = status("Shadowing", follower("feeder-1", 4, Instant.EPOCH, NOW_SECONDS - 1, null), ts(NOW_SECONDS));
        assertThat(s.follower.running).isFalse();
        assertThat(s.follower.holder).isEqualTo("feeder-1");
        Observed c = condition(s).orElseThrow();
        assertThat(c.reason()).isEqualTo("FollowerStopped");
        assertThat(c.message()).contains("last held by feeder-1, term 4").contains("shop-feeder Deployment")
                .contains("holds a cutover to tiered back");
    }

    @Test
    void noFollowerDocumentInShadowIsStopped() {
        ModeStatus s = status("Shadowing", null, ts(NOW_SECONDS));
        assertThat(s.follower.running).isFalse();
        assertThat(s.follower.holder).isNull();
        assertThat(s.follower.lagSeconds).as("nothing applied: no lag to show").isNull();
        Observed c = condition(s).orElseThrow();
        assertThat(c.reason()).isEqualTo("FollowerStopped");
        assertThat(c.message()).contains("no feeder process has taken it yet");
    }

    @Test
    void aRunningResyncShowsSinceWhenAndItsProgress() {
        Document resync = new Document("count", 2L).append("startedAt", Date.from(NOW.minusSeconds(300))).append("finishedAt", null)
                .append("reason", "archive change stream history lost (code 286)").append("copied", 1200L).append("deleted", 3L);
        ModeStatus s = status("Shadowing", follower("feeder-1", 5, NOW.plusSeconds(8), NOW_SECONDS - 900, resync), ts(NOW_SECONDS));
        assertThat(s.follower.resync.running).isTrue();
        assertThat(s.follower.resync.startedAt).isEqualTo("2026-12-01T17:55:00Z");
        assertThat(s.follower.resync.copied).isEqualTo(1200L);
        assertThat(s.follower.resync.deleted).isEqualTo(3L);
        Observed c = condition(s).orElseThrow();
        assertThat(c.reason()).as("resyncing comes before the lag it causes").isEqualTo("FollowerResyncing");
        assertThat(c.message()).contains("since 2026-12-01T17:55:00Z").contains("1200 document(s) copied and 3 deleted")
                .contains("replSetResizeOplog").contains("cutover");

        resync.append("finishedAt", Date.from(NOW.minusSeconds(10)));
        ModeStatus done = status("Shadowing", follower("feeder-1", 5, NOW.plusSeconds(8), NOW_SECONDS - 1, resync), ts(NOW_SECONDS));
        assertThat(done.follower.resync.running).isFalse();
        assertThat(done.follower.resync.finishedAt).isEqualTo("2026-12-01T17:59:50Z");
        assertThat(condition(done).orElseThrow().reason()).isEqualTo("InStep");
    }

    @Test
    void whileCuttingOverTheLagIsToTheCutoverPoint() {
        // the archive moves on (other collections, no-op writes); the fleet waits only for the cutover point
        Document mode = mode("CuttingOver").append("cutoverAt", ts(NOW_SECONDS - 100));
        ModeStatus s = ModeDriver.status(new ModeReading(ModeDocument.parse(mode), ShadowEvidence.NONE,
                FollowerDocument.parse(follower("feeder-1", 3, NOW.plusSeconds(8), NOW_SECONDS - 100, null)), ts(NOW_SECONDS)), NOW);
        assertThat(s.follower.lagSeconds).isZero();
        assertThat(s.follower.archiveLatest).isEqualTo("2026-12-01T17:58:20Z");
        ModeStatus stuck = ModeDriver.status(new ModeReading(ModeDocument.parse(mode), ShadowEvidence.NONE,
                FollowerDocument.parse(follower("feeder-1", 3, NOW.plusSeconds(8), NOW_SECONDS - 200, null)), ts(NOW_SECONDS)), NOW);
        Observed c = condition(stuck).orElseThrow();
        assertThat(c.reason()).isEqualTo("FollowerBehind");
        assertThat(c.message()).contains("100 s behind").contains("writes on tiered collections stay refused");
    }

    @Test
    void anArchiveThatCannotBeAskedLeavesTheLagUnknown() {
        ModeStatus s = status("Shadowing", follower("feeder-1", 3, NOW.plusSeconds(8), NOW_SECONDS - 1, null), null);
        assertThat(s.follower.lagSeconds).isNull();
        assertThat(s.follower.archiveLatest).isNull();
        Observed c = condition(s).orElseThrow();
        assertThat(c.status()).isEqualTo(Observed.Status.Unknown);
        assertThat(c.reason()).isEqualTo("LagUnknown");
    }

    @Test
    void theFollowerIsShownOnlyWhileTheArchiveIsAuthoritative() {
        Document stale = follower("feeder-1", 3, Instant.EPOCH, NOW_SECONDS - 5000, null);
        for (String phase : new String[] {"Tiered", "Draining"}) {
            ModeStatus s = status(phase, stale, ts(NOW_SECONDS));
            assertThat(s.follower).as(phase).isNull();
            assertThat(condition(s)).as(phase).isEmpty();
        }
        assertThat(condition(status("Drained", stale, ts(NOW_SECONDS))).orElseThrow().message()).contains("switch back to tiered");
    }

    @Test
    void anUnreadableFastTierKeepsTheLastFollowerAsUnknown() {
        ModeStatus last = status("Shadowing", follower("feeder-1", 3, NOW.plusSeconds(8), NOW_SECONDS, null), ts(NOW_SECONDS));
        Observed c = FollowerHealth.of(last, false, "the fast tier's mode document cannot be read right now", cluster()).orElseThrow();
        assertThat(c.type()).isEqualTo(ConditionType.FollowerHealthy);
        assertThat(c.status()).isEqualTo(Observed.Status.Unknown);
        assertThat(c.message()).contains("cannot be read");
    }

    private static ModeStatus status(String phase, Document follower, BsonTimestamp archiveLatest) {
        return ModeDriver.status(new ModeReading(ModeDocument.parse(mode(phase)), ShadowEvidence.NONE,
                FollowerDocument.parse(follower), archiveLatest), NOW);
    }

    private static Optional<Observed> condition(ModeStatus s) {
        Optional<Observed> c = FollowerHealth.of(s, true, null, cluster());
        c.ifPresent(o -> assertThat(o.type()).isEqualTo(ConditionType.FollowerHealthy));
        return c;
    }

    private static Document mode(String phase) {
        String active = switch (phase) {
            case "Tiered" -> "tiered";
            case "Draining", "Drained" -> "draining";
            default -> "shadow";
        };
        return new Document("_id", "mode").append("requested", "tiered").append("active", active).append("phase", phase)
                .append("since", Date.from(NOW)).append("epoch", 3L).append("version", 7L);
    }

    /** As the data plane's ModeStore writes it: lease {owner, term, expiresAt}, progress fields, resync. */
    private static Document follower(String owner, long term, Instant expiresAt, int appliedSeconds, Document resync) {
        Document d = new Document("_id", "archiveFollower").append("origin", ts(1))
                .append("resumeToken", new Document("_data", "8263")).append("appliedThrough", ts(appliedSeconds))
                .append("changing", new Document("shop\u0001orders", ts(appliedSeconds)))
                .append("lease", new Document("owner", owner).append("term", term).append("expiresAt", Date.from(expiresAt)));
        return resync == null ? d : d.append("resync", resync);
    }

    private static BsonTimestamp ts(int seconds) {
        return new BsonTimestamp(seconds, 1);
    }

    private static ThermoclineCluster cluster() {
        ThermoclineCluster cluster = new ThermoclineCluster();
        cluster.setMetadata(new ObjectMetaBuilder().withName("shop").withNamespace("apps").build());
        return cluster;
    }
}
