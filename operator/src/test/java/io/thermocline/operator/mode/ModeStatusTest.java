package io.thermocline.operator.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.operator.api.v1alpha1.ClusterMode;
import io.thermocline.operator.api.v1alpha1.ModeStatus;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.status.Observed;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The MODES.md documents as the operator reads them, and the conditions they give, without Kubernetes. */
@Timeout(10)
class ModeStatusTest {

    private static final Instant T = Instant.parse("2026-12-01T10:00:00.123Z");

    @Test
    void aMissingDocumentIsTieredAndCarriesNoRequest() {
        ModeDocument missing = ModeDocument.parse(null);
        assertThat(missing.active()).isEqualTo("tiered");
        assertThat(missing.phase()).isEqualTo("Tiered");
        assertThat(new ModeRequest(ClusterMode.TIERED, false, "operator").writtenIn(missing)).isFalse();
        // a document the data plane created without active/phase yet reads the same way
        assertThat(ModeDocument.parse(new Document("_id", "mode").append("requested", "shadow")).active()).isEqualTo("tiered");
    }

    @Test
    void theDocumentBecomesTheStatusWithTheDrainProgress() {
        ModeDocument mode = ModeDocument.parse(new Document("_id", "mode").append("requested", "draining").append("override", false)
                .append("requestedBy", "cli").append("requestedAt", Date.from(T)).append("active", "draining")
                .append("phase", "Draining").append("refusal", null).append("since", Date.from(T)).append("epoch", 4L)
                .append("version", 9L).append("drain", new Document("feederLagSeconds", 1.5).append("unmirroredEvents", 7L)
                        .append("startedAt", Date.from(T)).append("drainedAt", null)));
        assertThat(mode.version()).isEqualTo(9L);
        assertThat(mode.settled()).as("draining settles only at Drained").isFalse();
        ModeStatus status = ModeDriver.status(new ModeStore.ModeReading(mode, ShadowEvidence.NONE, FollowerDocument.MISSING, null), T);
        assertThat(status.requestedBy).isEqualTo("cli");
        assertThat(status.since).isEqualTo("2026-12-01T10:00:00Z");
        assertThat(status.epoch).isEqualTo(4L);
        assertThat(status.shadow).as("no shadow reads: no shadow section").isNull();
        assertThat(status.drain.unmirroredEvents).isEqualTo(7L);
        assertThat(status.drain.drainedAt).isNull();

        List<Observed> conditions = ModeConditions.of(ClusterMode.DRAINING, status, true, null);
        assertThat(conditions).extracting(o -> o.type() + "=" + o.status() + "/" + o.reason())
                .containsExactly("ModeActive=False/Draining", "Drained=False/Draining");
        assertThat(conditions.get(1).message()).contains("1.5 s behind").contains("7 write(s)");
    }

    @Test
    void shadowEvidenceIsSummedOverReplicasWithTheNewestDivergence() {
        ShadowEvidence sum = ShadowEvidence.sum(List.of(
                shadow("p0|shop.orders", "shop.orders", 300, 200, 100, 1, T),
                shadow("p1|shop.orders", "shop.orders", 100, 100, 50, 0, null),
                shadow("p1|shop.carts", "shop.carts", 100, 0, 0, 2, T.plusSeconds(60))));
        assertThat(sum.reads()).isEqualTo(500);
        assertThat(sum.compared()).isEqualTo(150);
        assertThat(sum.diverged()).isEqualTo(3);
        assertThat(sum.wouldServePercent()).isEqualTo("60.0");
        assertThat(sum.lastDivergenceAt()).isEqualTo(T.plusSeconds(60));
        assertThat(sum.lastDivergenceNamespace()).isEqualTo("shop.carts");
        assertThat(ShadowEvidence.NONE.wouldServePercent()).isNull();
    }

    @Test
    void aRefusedCutoverSaysWhyAndHowToOverride() {
        ModeStatus s = new ModeStatus();
        s.requested = "tiered";
        s.active = "shadow";
        s.phase = "Shadowing";
        s.refusal = "shop.orders: 12 of 1000 comparisons";
        Observed active = ModeConditions.of(ClusterMode.TIERED, s, true, null).get(0);
        assertThat(active.type()).isEqualTo(ConditionType.ModeActive);
        assertThat(active.reason()).isEqualTo("CutoverRefused");
        assertThat(active.message()).startsWith(s.refusal).contains("spec.modeOverride");

        s.refusal = null;
        s.phase = "CuttingOver";
        assertThat(ModeConditions.of(ClusterMode.TIERED, s, true, null).get(0).reason()).isEqualTo("CuttingOver");
        s.active = "tiered";
        s.phase = "Tiered";
        assertThat(ModeConditions.of(ClusterMode.TIERED, s, true, null)).extracting(o -> o.status() + "/" + o.reason())
                .containsExactly("True/Tiered", "False/NotDraining");
        assertThat(ModeConditions.of(ClusterMode.SHADOW, s, true, null).get(0).reason())
                .as("requested but not yet acted on").isEqualTo("Switching");
    }

    @Test
    void anUnreadableFastTierIsUnknownWithTheLastSeenMode() {
        ModeStatus s = new ModeStatus();
        s.active = "shadow";
        s.phase = "Shadowing";
        assertThat(ModeConditions.of(ClusterMode.SHADOW, s, false, "cannot be read")).allSatisfy(o -> {
            assertThat(o.status()).isEqualTo(Observed.Status.Unknown);
            assertThat(o.message()).contains("cannot be read").contains("last seen: shadow, Shadowing");
        });
    }

    private static Document shadow(String id, String namespace, long reads, long wouldServe, long compared, long diverged,
            Instant lastDivergence) {
        return new Document("_id", id).append("namespace", namespace).append("reads", reads).append("wouldServe", wouldServe)
                .append("compared", compared).append("agreed", compared - diverged).append("diverged", diverged)
                .append("lastDivergenceAt", lastDivergence == null ? null : Date.from(lastDivergence));
    }
}
