package io.thermocline.proxy.tiered.exchange;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.causal.MirrorProgress;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.metadata.StateFreshness;
import io.thermocline.tiering.metadata.TieringSnapshot;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/** Fail closed on a stale view of the tiering state (issue 10, bug 12). */
class TieringFollowerTest {

    static final CollectionPolicy ORDERS = new CollectionPolicy("shop", "orders", "createdAt", Duration.ofHours(1));
    static final long DELAY = Duration.ofSeconds(1).toNanos();
    static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    /** A read of documents with createdAt >= T0: fast while the bound is at or below T0. */
    static final Predicate<RoutingTable> READ_FROM_T0 =
            t -> t.coverage(ORDERS.namespace()).covers(T0);

    /** A follower's reads as a test sets them: when the last one started, when the unbroken run began. */
    static final class Reads implements StateFreshness {
        long now = 10 * DELAY;
        long lastRead = -1;
        long unbrokenSince = -1;

        void readNow() {
            if (lastRead < 0 || now - lastRead >= DELAY) {
                unbrokenSince = now;
            }
            lastRead = now;
        }

        @Override
        public boolean fresh(long nowNanos) {
            return lastRead >= 0 && nowNanos - lastRead < DELAY;
        }

        @Override
        public long readStartedNanos() {
            return lastRead;
        }

        @Override
        public long unbrokenSinceNanos() {
            return unbrokenSince;
        }
    }

    final Reads reads = new Reads();
    final TieringFollower follower =
            new TieringFollower(List.of(ORDERS), reads, new MirrorProgress(() -> null), () -> reads.now);

    void bound(Instant coveredFrom) {
        reads.readNow();
        NamespaceState state = NamespaceState.initial(ORDERS.namespace()).withCoverage(coveredFrom);
        follower.apply(
                new TieringSnapshot(Map.of(ORDERS.namespace(), state), FeederCheckpoint.initial(), Instant.now()));
    }

    @Test
    void boundsAreUsedOnlyWhileTheLastReadIsWithinThePropagationDelay() {
        bound(T0.minusSeconds(60));
        assertThat(READ_FROM_T0.test(follower.table())).isTrue();
        reads.now += DELAY - 1;
        assertThat(READ_FROM_T0.test(follower.table())).isTrue();
        reads.now += 1; // no successful read for the whole delay: an evictor may delete under a bound not seen
        assertThat(follower.table().coverage(ORDERS.namespace())).isInstanceOf(CoverageBound.Nothing.class);
        reads.readNow();
        assertThat(READ_FROM_T0.test(follower.table())).isTrue();
    }

    @Test
    void aFastAnswerIsTrustedWhileTheCoverageItNeedsHolds() {
        bound(T0.minusSeconds(60));
        TieringFollower.Decided decided = follower.decide();
        reads.now += DELAY / 2;
        bound(T0.minusSeconds(30)); // raised, still below the read's bound
        assertThat(follower.stillServes(decided, READ_FROM_T0)).isTrue();
    }

    @Test
    void aFastAnswerIsNotTrustedOnceABoundAboveItWasSeenEvenIfLoweredAgain() {
        bound(T0.minusSeconds(60));
        TieringFollower.Decided decided = follower.decide();
        reads.now += DELAY / 4;
        bound(T0.plusSeconds(30)); // the evictor raised past the read: it may delete what the read returns
        reads.now += DELAY / 4;
        bound(T0.minusSeconds(60)); // the warmer lowered it again: documents may have been missing in between
        assertThat(READ_FROM_T0.test(follower.table())).isTrue();
        assertThat(follower.stillServes(decided, READ_FROM_T0)).isFalse();
    }

    @Test
    void aFastAnswerIsNotTrustedAfterAGapInTheReads() {
        bound(T0.minusSeconds(60));
        TieringFollower.Decided decided = follower.decide();
        reads.now += DELAY * 3; // reads failed for a while: a raise may have come and gone unseen
        reads.readNow();
        assertThat(follower.stillServes(decided, READ_FROM_T0)).isFalse();
        assertThat(follower.stillServes(follower.decide(), READ_FROM_T0)).isTrue();
    }

    @Test
    void aFastAnswerIsNotTrustedWhenTheViewWentStale() {
        bound(T0.minusSeconds(60));
        TieringFollower.Decided decided = follower.decide();
        reads.now += DELAY;
        assertThat(follower.stillServes(decided, READ_FROM_T0)).isFalse();
    }
}
