package io.thermocline.tiering.feeder;

import static org.assertj.core.api.Assertions.assertThat;

import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class UnresolvedWritesTest {

    static BsonTimestamp t(int inc) {
        return new BsonTimestamp(100, inc);
    }

    @Test
    void withoutHoldsTheBatchIsPublishedAndNeverMovesBack() {
        UnresolvedWrites unresolved = new UnresolvedWrites();
        assertThat(unresolved.publishable(t(5), t(9), t(9))).isEqualTo(t(9));
        assertThat(unresolved.publishable(t(9), t(7), t(7)))
                .as("never below what is published")
                .isEqualTo(t(9));
    }

    @Test
    void aHoldKeepsMirroredThroughBelowItsWriteUntilABatchReachesItsProbe() {
        UnresolvedWrites unresolved = new UnresolvedWrites();
        unresolved.hold(t(4), t(20));
        assertThat(unresolved.publishable(t(3), t(10), t(10))).isEqualTo(t(4));
        assertThat(unresolved.publishable(t(4), t(19), t(19)))
                .as("one before the probe")
                .isEqualTo(t(4));
        assertThat(unresolved.holding()).isTrue();
        assertThat(unresolved.publishable(t(4), t(20), t(20)))
                .as("the batch reached the probe")
                .isEqualTo(t(20));
        assertThat(unresolved.holding()).isFalse();
    }

    @Test
    void theLowestHoldLeftWinsAndEachIsReleasedByItsOwnProbe() {
        UnresolvedWrites unresolved = new UnresolvedWrites();
        unresolved.hold(t(4), t(20));
        unresolved.hold(t(15), t(30));
        assertThat(unresolved.publishable(t(0), t(18), t(18))).isEqualTo(t(4));
        assertThat(unresolved.publishable(t(4), t(25), t(25)))
                .as("the first released, the second holds")
                .isEqualTo(t(15));
        assertThat(unresolved.publishable(t(15), t(31), t(31))).isEqualTo(t(31));
    }

    @Test
    void withoutAStreamBatchNothingIsReleased() {
        UnresolvedWrites unresolved = new UnresolvedWrites();
        unresolved.hold(t(4), t(20));
        assertThat(unresolved.publishable(t(4), t(25), null)).isEqualTo(t(4));
    }

    @Test
    void anOpenDeadLetterHoldsMirroredThroughWherePublishedWhileProbesPassAndReleasesItWhenClosed() {
        UnresolvedWrites unresolved = new UnresolvedWrites();
        unresolved.hold(t(4), t(20));
        unresolved.deadLetters(1);
        assertThat(unresolved.publishable(t(3), t(25), t(25)))
                .as("held where published")
                .isEqualTo(t(3));
        assertThat(unresolved.holding()).isTrue();
        unresolved.deadLetters(0);
        assertThat(unresolved.publishable(t(3), t(26), t(26)))
                .as("the probe's hold was released while the letter was open")
                .isEqualTo(t(26));
        assertThat(unresolved.holding()).isFalse();
    }
}
