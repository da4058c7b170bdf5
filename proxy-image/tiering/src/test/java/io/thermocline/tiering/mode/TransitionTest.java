package io.thermocline.tiering.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.Mode;
import java.time.Instant;
import java.util.Optional;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class TransitionTest {

    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
    private static final BsonTimestamp T = new BsonTimestamp(1000, 1);

    private static Transition.Facts facts(boolean acked, boolean drained, BsonTimestamp follower, String refusal) {
        return new Transition.Facts(acked, drained, 0.5, 3, T, follower, Optional.ofNullable(refusal), NOW);
    }

    private static ModeDocument at(Mode active, Phase phase, Mode requested, boolean override) {
        return new ModeDocument(requested, override, "cli", NOW, active, phase, null, NOW, 7, 3, null, null, null, null);
    }

    @Test
    void cutoverIsRefusedWithTheGatesSentenceUnlessOverridden() {
        ModeDocument shadow = at(Mode.SHADOW, Phase.SHADOWING, Mode.TIERED, false);
        ModeDocument refused = Transition.next(shadow, facts(true, true, T, "shop.orders is not warmed yet")).orElseThrow();
        assertThat(refused.phase()).isEqualTo(Phase.SHADOWING);
        assertThat(refused.refusal()).isEqualTo("shop.orders is not warmed yet");
        assertThat(Transition.next(refused, facts(true, true, T, "shop.orders is not warmed yet"))).isEmpty();

        ModeDocument overridden = at(Mode.SHADOW, Phase.SHADOWING, Mode.TIERED, true);
        ModeDocument cutting = Transition.next(overridden, facts(true, true, T, "not warmed")).orElseThrow();
        assertThat(cutting.phase()).isEqualTo(Phase.CUTTING_OVER);
        assertThat(cutting.epoch()).isEqualTo(8);
    }

    @Test
    void cutoverWaitsForTheFleetThenForTheFollowerToReachTheArchiveTime() {
        ModeDocument cutting = at(Mode.SHADOW, Phase.CUTTING_OVER, Mode.TIERED, false);
        assertThat(Transition.next(cutting, facts(false, false, null, null))).isEmpty();
        ModeDocument pinned = Transition.next(cutting, facts(true, false, null, null)).orElseThrow();
        assertThat(pinned.cutoverAt()).isEqualTo(T);
        assertThat(pinned.epoch()).isEqualTo(cutting.epoch());
        assertThat(Transition.next(pinned, facts(true, false, new BsonTimestamp(999, 9), null))).isEmpty();
        ModeDocument tiered = Transition.next(pinned, facts(true, false, T, null)).orElseThrow();
        assertThat(tiered.phase()).isEqualTo(Phase.TIERED);
        assertThat(tiered.active()).isEqualTo(Mode.TIERED);
    }

    @Test
    void drainRefusesWritesUntilTheFleetAckedAndTheFeederCaughtUp() {
        ModeDocument tiered = at(Mode.TIERED, Phase.TIERED, Mode.DRAINING, false);
        ModeDocument draining = Transition.next(tiered, facts(true, true, null, null)).orElseThrow();
        assertThat(draining.phase()).isEqualTo(Phase.DRAINING);
        assertThat(draining.phase().writesRefused()).isTrue();
        assertThat(draining.drain().startedAt()).isEqualTo(NOW);
        ModeDocument progress = Transition.next(draining, facts(true, false, null, null)).orElseThrow();
        assertThat(progress.phase()).isEqualTo(Phase.DRAINING);
        assertThat(progress.drain().unmirroredEvents()).isEqualTo(3);
        assertThat(Transition.next(draining, facts(false, true, null, null)).orElseThrow().phase()).isEqualTo(Phase.DRAINING);
        ModeDocument drained = Transition.next(draining, facts(true, true, null, null)).orElseThrow();
        assertThat(drained.phase()).isEqualTo(Phase.DRAINED);
        assertThat(drained.followFrom()).isEqualTo(T);
        assertThat(drained.drain().drainedAt()).isEqualTo(NOW);
    }

    @Test
    void tieredToShadowGoesThroughDrainingAndSaysSo() {
        ModeDocument tiered = at(Mode.TIERED, Phase.TIERED, Mode.SHADOW, false);
        ModeDocument draining = Transition.next(tiered, facts(true, true, null, null)).orElseThrow();
        assertThat(draining.phase()).isEqualTo(Phase.DRAINING);
        assertThat(draining.refusal()).contains("through draining");
        ModeDocument drained = Transition.next(draining, facts(true, true, null, null)).orElseThrow();
        ModeDocument shadow = Transition.next(drained, facts(true, true, null, null)).orElseThrow();
        assertThat(shadow.phase()).isEqualTo(Phase.SHADOWING);
        assertThat(shadow.refusal()).isNull();
    }

    @Test
    void drainedCanGoBackToTieredOnlyThroughACutover() {
        ModeDocument drained = at(Mode.DRAINING, Phase.DRAINED, Mode.TIERED, false);
        ModeDocument cutting = Transition.next(drained, facts(true, true, T, null)).orElseThrow();
        assertThat(cutting.phase()).isEqualTo(Phase.CUTTING_OVER);
        assertThat(cutting.phase().writesRefused()).isTrue();
        ModeDocument undrained = Transition.next(at(Mode.DRAINING, Phase.DRAINING, Mode.TIERED, false), facts(false, false, null, null))
                .orElseThrow();
        assertThat(undrained.phase()).isEqualTo(Phase.TIERED);
    }

    @Test
    void onlyRestoreSyncLeavesRestoringWhateverIsRequested() {
        for (Mode requested : Mode.values()) {
            for (boolean override : new boolean[] {false, true}) {
                ModeDocument restoring = at(Mode.DRAINING, Phase.RESTORING, requested, override);
                assertThat(Transition.next(restoring, facts(true, true, T, null))).as("%s override %s", requested, override).isEmpty();
            }
        }
        ModeDocument d = at(Mode.DRAINING, Phase.RESTORING, Mode.DRAINING, false);
        assertThat(ModeDocument.fromBson(d.toBson()).phase()).isEqualTo(Phase.RESTORING);
        assertThat(Phase.RESTORING.writesRefused()).isTrue();
        assertThat(Phase.RESTORING.archiveAuthoritative()).as("the follower stays idle while the archive is replaced").isFalse();
    }

    @Test
    void documentRoundTripsThroughBson() {
        ModeDocument d = at(Mode.DRAINING, Phase.DRAINING, Mode.DRAINING, false).withDrain(DrainProgress.started(NOW).withLag(1.5, 4))
                .withCutoverAt(T).withRefusal("because");
        assertThat(ModeDocument.fromBson(d.toBson())).isEqualTo(d);
    }

    @Test
    void aCutoverTheFollowerDoesNotFinishInTimeGoesBackToWhereItStartedSayingWhy() {
        ModeDocument pinned = at(Mode.SHADOW, Phase.CUTTING_OVER, Mode.TIERED, false).withCutoverAt(T);
        BsonTimestamp behind = new BsonTimestamp(990, 1);
        assertThat(Transition.next(pinned, facts(true, false, behind, null))).as("within the wait: it waits").isEmpty();
        Transition.Facts late = new Transition.Facts(true, false, 0.5, 3, T, behind, Optional.empty(),
                NOW.plus(Transition.CUTOVER_FOLLOWER_WAIT).plusSeconds(1));
        ModeDocument back = Transition.next(pinned, late).orElseThrow();
        assertThat(back.phase()).isEqualTo(Phase.SHADOWING);
        assertThat(back.phase().writesRefused()).isFalse();
        assertThat(back.refusal()).contains("did not apply the archive through the cutover point").contains("back to Shadowing");

        ModeDocument fromDrained = at(Mode.DRAINING, Phase.CUTTING_OVER, Mode.TIERED, false).withCutoverAt(T);
        assertThat(Transition.next(fromDrained, late).orElseThrow().phase()).isEqualTo(Phase.DRAINED);
    }

    @Test
    void drainedToTieredWaitsForTheFollowerGate() {
        ModeDocument drained = at(Mode.DRAINING, Phase.DRAINED, Mode.TIERED, false);
        ModeDocument refused = Transition.next(drained, facts(true, true, T, "the archive follower is not running")).orElseThrow();
        assertThat(refused.phase()).isEqualTo(Phase.DRAINED);
        assertThat(refused.refusal()).isEqualTo("the archive follower is not running");
        assertThat(Transition.next(drained, facts(true, true, T, null)).orElseThrow().phase()).isEqualTo(Phase.CUTTING_OVER);
    }
}
