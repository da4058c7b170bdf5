package io.thermocline.proxy.causal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FastTierClockTest {

    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final AtomicInteger probes = new AtomicInteger();
    private final Semaphore release = new Semaphore(0);
    private final CountDownLatch firstStarted = new CountDownLatch(1);

    /** A probe that blocks until released and returns (n, 0) for the n-th probe. */
    private BsonTimestamp probe() {
        int n = probes.incrementAndGet();
        firstStarted.countDown();
        release.acquireUninterruptibly();
        return new BsonTimestamp(n, 0);
    }

    @AfterEach
    void stop() {
        executor.shutdownNow();
    }

    @Test
    void aCallerArrivingWhileAProbeRunsGetsTheNextProbe() throws Exception {
        FastTierClock clock = new FastTierClock(this::probe, executor);
        CompletableFuture<BsonTimestamp> first = clock.now();
        assertThat(firstStarted.await(5, TimeUnit.SECONDS)).isTrue();
        // the first probe may have been ordered before a write this caller was told about
        CompletableFuture<BsonTimestamp> later = clock.now();
        release.release();
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo(new BsonTimestamp(1, 0));
        release.release();
        assertThat(later.get(5, TimeUnit.SECONDS)).isEqualTo(new BsonTimestamp(2, 0));
    }

    @Test
    void callersArrivingDuringOneProbeShareTheNext() throws Exception {
        FastTierClock clock = new FastTierClock(this::probe, executor);
        CompletableFuture<BsonTimestamp> first = clock.now();
        assertThat(firstStarted.await(5, TimeUnit.SECONDS)).isTrue();
        List<CompletableFuture<BsonTimestamp>> waiting = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            waiting.add(clock.now());
        }
        release.release(2);
        first.get(5, TimeUnit.SECONDS);
        for (CompletableFuture<BsonTimestamp> w : waiting) {
            assertThat(w.get(5, TimeUnit.SECONDS)).isEqualTo(new BsonTimestamp(2, 0));
        }
        assertThat(probes.get()).isEqualTo(2);
        // idle again: the next caller starts a probe of its own
        release.release();
        assertThat(clock.now().get(5, TimeUnit.SECONDS)).isEqualTo(new BsonTimestamp(3, 0));
    }

    @Test
    void aCallerThatFindsNoProbeRunningRunsItInItsOwnThreadAndLaterArrivalsShareTheNext() throws Exception {
        List<Thread> probedIn = new java.util.concurrent.CopyOnWriteArrayList<>();
        FastTierClock clock = FastTierClock.runByCaller(
                () -> {
                    probedIn.add(Thread.currentThread());
                    return probe();
                },
                executor);
        CompletableFuture<BsonTimestamp> first =
                CompletableFuture.supplyAsync(() -> clock.now().join(), executor);
        assertThat(firstStarted.await(5, TimeUnit.SECONDS)).isTrue();
        Thread caller = probedIn.get(0);
        List<CompletableFuture<BsonTimestamp>> waiting = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            waiting.add(clock.now()); // returns at once: a probe runs, so they wait for the next
        }
        release.release(2);
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo(new BsonTimestamp(1, 0));
        for (CompletableFuture<BsonTimestamp> w : waiting) {
            assertThat(w.get(5, TimeUnit.SECONDS)).isEqualTo(new BsonTimestamp(2, 0));
        }
        assertThat(probes.get()).isEqualTo(2);
        assertThat(probedIn.get(1))
                .as("the shared next probe runs on the executor, not in the first caller's thread")
                .isNotSameAs(caller);
        release.release();
        assertThat(clock.now().get(5, TimeUnit.SECONDS))
                .as("idle: run by this caller")
                .isEqualTo(new BsonTimestamp(3, 0));
        assertThat(probedIn.get(2)).isSameAs(Thread.currentThread());
    }

    @Test
    void aFailedProbeFailsItsCallersAndTheNextCallerProbesAgain() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        FastTierClock clock = new FastTierClock(
                () -> {
                    if (calls.incrementAndGet() == 1) {
                        throw new IllegalStateException("no primary");
                    }
                    return new BsonTimestamp(7, 1);
                },
                executor);
        CompletableFuture<BsonTimestamp> failed = clock.now();
        assertThat(failed).failsWithin(5, TimeUnit.SECONDS);
        assertThat(clock.now().get(5, TimeUnit.SECONDS)).isEqualTo(new BsonTimestamp(7, 1));
    }
}
