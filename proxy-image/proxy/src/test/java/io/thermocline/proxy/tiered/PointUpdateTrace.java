package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which of the project's classes an update by {@code _id} of a document the fast tier holds runs through, sampled as
 * {@link FastTierFindTrace} samples a find: the official driver sends {@code updateOne({_id}, {$inc})} to hot documents
 * while a sampler reads the proxy's stacks. Sampling sees only what ran on a stack that holds a frame of the request
 * path, so the list it prints is a lower bound: the write path's own transaction runs partly on the driver's threads.
 *
 * <p>Not part of {@code mvn verify} (the name is not a test's): run it with {@code mvn -o -pl proxy-image/proxy
 * test-compile surefire:test@default-test -Dtest=PointUpdateTrace}.
 */
class PointUpdateTrace {

    @Test
    @Timeout(180)
    void anUpdateByIdOfAHotDocumentIsServedOnTheFastTier() throws Exception {
        Instant now = Instant.now();
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            stack.coverSince(now.minus(Duration.ofHours(1)));
            for (int i = 0; i < 20; i++) {
                stack.orders().insertOne(TieredProxyTest.order(i, now.minus(Duration.ofMinutes(5)), "hot"));
            }
            Map<String, Integer> seen = new TreeMap<>();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    for (StackTraceElement[] frames : Thread.getAllStackTraces().values()) {
                        FastTierFindTrace.record(frames, seen);
                    }
                }
            });
            long fastBefore = stack.routing.metrics().count("write", Served.FAST);
            sampler.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            int updates = 0;
            while (System.nanoTime() < deadline) {
                var result = stack.orders().updateOne(Filters.eq("_id", updates % 20), Updates.inc("n", 1));
                assertThat(result.getModifiedCount()).isEqualTo(1);
                updates++;
            }
            sampling.set(false);
            sampler.join();
            seen.keySet().removeIf(PointUpdateTrace::testCode);
            long fast = stack.routing.metrics().count("write", Served.FAST) - fastBefore;
            System.out.printf(
                    "%d updates by _id, %d routed to the fast tier; %d classes in %d packages:%n",
                    updates,
                    fast,
                    seen.size(),
                    FastTierFindTrace.packages(seen.keySet()).size());
            seen.forEach((c, n) -> System.out.printf("  %6d  %s%n", n, c));
            assertThat(fast).as("every update was routed to the fast tier").isEqualTo(updates);
            assertThat(seen.keySet()).contains("io.thermocline.proxy.tiered.TieredRouting");
        }
    }

    /** The test's own fixtures (a TieredStack's frames under the proxy's worker threads) are not the path's. */
    private static boolean testCode(String className) {
        try {
            return Class.forName(className)
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .getPath()
                    .contains("test-classes");
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
