package io.thermocline.proxy.causal;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.ReadConsistency;
import io.thermocline.tiering.state.MirroredThrough;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A linearizable read that asks the archive while the fast tier's present is read ({@link ReadBarrier.Speculation}):
 * its answer is kept only when the stream shows no write to its namespaces after the mirrored-through read before the
 * archive was asked; otherwise the read passes the barrier as before (times are seconds).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReadBarrierSpeculationTest {

    private static final Set<String> ORDERS = Set.of("shop.orders");
    private static final Set<String> TIERED = Set.of("shop.orders", "shop.carts");

    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final FastTierWrites writes = new FastTierWrites();
    private final AtomicReference<BsonTimestamp> present = new AtomicReference<>(t(50));
    /** What a probe write returns: the fast tier's present as a write learns it. */
    private final AtomicReference<BsonTimestamp> probed = new AtomicReference<>(t(50));

    private final AtomicInteger probes = new AtomicInteger();
    private final MirrorProgress progress = new MirrorProgress(() -> null);
    private final ReadBarrier barrier = new ReadBarrier(
            ReadConsistency.LINEARIZABLE,
            new FastTierClock(
                    () -> {
                        probes.incrementAndGet();
                        return probed.get();
                    },
                    executor),
            progress,
            Duration.ofSeconds(20),
            new ReadBarrier.Watch(
                    writes, FastTierClock.runByCaller(present::get, executor), TIERED, Duration.ofSeconds(5)),
            Optional::empty);

    ReadBarrierSpeculationTest() {
        writes.openedAt(t(10));
        writes.readThrough(t(40));
        progress.observed(new MirroredThrough(t(30)));
    }

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    @Test
    void anAnswerWithNothingUnmirroredToItsNamespacesIsKeptWithoutProbeOrWait() throws Exception {
        writes.wrote(List.of("shop.carts"), t(45)); // another namespace: not this read's
        ReadBarrier.Speculation speculation =
                barrier.speculation("count", ORDERS).orElseThrow();
        writes.readThrough(t(50));
        ReadBarrier.Settled settled = speculation.settle();
        assertThat(settled).isEqualTo(new ReadBarrier.Kept(t(30)));
        assertThat(barrier.counts()).isEqualTo(new ReadBarrier.Counts(0, 0, 0, 0, 0, 0, 1, 0));
        assertThat(probes).as("no probe written").hasValue(0);
    }

    @Test
    void aWriteTheStreamShowsAfterTheArchiveWasAskedDropsTheAnswerAndTheReadWaitsForIt() throws Exception {
        ReadBarrier.Speculation speculation =
                barrier.speculation("count", ORDERS).orElseThrow();
        // acknowledged before the read arrived (so at or before the present), recorded by the stream only now
        writes.wrote(List.of("shop.orders"), t(42));
        writes.readThrough(t(50));
        ReadBarrier.Settled settled = speculation.settle();
        assertThat(settled)
                .as("decided before any wait, so the caller drops the answer first")
                .isInstanceOf(ReadBarrier.Again.class);
        assertThat(barrier.counts().speculationsDropped()).isEqualTo(1);
        assertThat(barrier.counts().waitedForFeeder()).isZero();
        CompletableFuture<BsonTimestamp> through = CompletableFuture.supplyAsync(() -> {
            try {
                return ((ReadBarrier.Again) settled).await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        while (barrier.counts().waitedForFeeder() == 0) {
            Thread.sleep(5);
        }
        assertThat(through).as("waits for the feeder to mirror the write").isNotDone();
        progress.observed(new MirroredThrough(t(42)));
        assertThat(through.get(10, TimeUnit.SECONDS)).isEqualTo(t(42));
        assertThat(barrier.counts().speculated()).isZero();
    }

    @Test
    void aWriteMirroredAfterTheArchiveWasAskedStillDropsTheAnswer() throws Exception {
        ReadBarrier.Speculation speculation =
                barrier.speculation("count", ORDERS).orElseThrow();
        writes.wrote(List.of("shop.orders"), t(42));
        writes.readThrough(t(50));
        // mirrored before the barrier decides, but the archive may have answered before it was: the answer is not kept
        progress.observed(new MirroredThrough(t(45)));
        ReadBarrier.Settled settled = speculation.settle();
        assertThat(settled).isInstanceOf(ReadBarrier.Again.class);
        assertThat(((ReadBarrier.Again) settled).await()).isEqualTo(t(45));
        assertThat(barrier.counts())
                .as("dropped, then quiet: the read asked again passes at once")
                .isEqualTo(new ReadBarrier.Counts(0, 0, 0, 0, 0, 1, 0, 1));
    }

    @Test
    void aStreamReopenedAfterTheArchiveWasAskedDropsTheAnswerAndTheReadProbes() throws Exception {
        ReadBarrier.Speculation speculation =
                barrier.speculation("count", ORDERS).orElseThrow();
        writes.openedAt(t(35)); // after mirrored-through: the writes between were never seen
        writes.readThrough(t(50));
        progress.observed(new MirroredThrough(t(34)));
        probed.set(t(34));
        ReadBarrier.Settled settled = speculation.settle();
        assertThat(settled).isInstanceOf(ReadBarrier.Again.class);
        assertThat(((ReadBarrier.Again) settled).await()).isEqualTo(t(34));
        assertThat(probes).as("the present from a probe, as without the stream").hasValue(1);
        assertThat(barrier.counts())
                .as("dropped, then probed")
                .isEqualTo(new ReadBarrier.Counts(0, 1, 0, 0, 0, 0, 0, 1));
    }

    @Test
    void noSpeculationWhereTheReadWouldWaitOrMayWrite() {
        writes.wrote(List.of("shop.orders"), t(35));
        assertThat(barrier.speculation("count", ORDERS))
                .as("an unmirrored write to it")
                .isEmpty();
        assertThat(barrier.speculation("count", Set.of("shop.carts")))
                .as("another namespace")
                .isPresent();
        assertThat(barrier.speculation("aggregate", null))
                .as("any namespace, or a pipeline that writes")
                .isEmpty();
        ReadBarrier session = new ReadBarrier(
                ReadConsistency.SESSION,
                new FastTierClock(probed::get, executor),
                progress,
                Duration.ofSeconds(20),
                new ReadBarrier.Watch(
                        writes, FastTierClock.runByCaller(present::get, executor), TIERED, Duration.ofSeconds(5)),
                Optional::empty);
        assertThat(session.speculation("count", Set.of("shop.carts")))
                .as("session mode")
                .isEmpty();
    }

    private static BsonTimestamp t(int seconds) {
        return new BsonTimestamp(seconds, 0);
    }
}
