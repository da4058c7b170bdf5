package io.thermocline.operator.archive;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import io.thermocline.operator.fakes.SteppedClock;
import org.junit.jupiter.api.Test;

class ProbeCacheTest {

    private final SteppedClock clock = new SteppedClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final AtomicInteger probes = new AtomicInteger();
    private final ArchiveProbe probe = c -> new ArchiveReport.Reachable("7.0." + probes.incrementAndGet(), "rs");

    @Test
    void reportIsReusedWithinTheIntervalAndRefreshedAfter() {
        ProbeCache cache = new ProbeCache(Duration.ofSeconds(30), clock);
        ArchiveConnection connection = new ArchiveConnection("mongodb://a/", null);
        assertThat(cache.probe("ns/c", connection, probe)).isEqualTo(new ArchiveReport.Reachable("7.0.1", "rs"));
        clock.advance(Duration.ofSeconds(29));
        assertThat(cache.probe("ns/c", connection, probe)).isEqualTo(new ArchiveReport.Reachable("7.0.1", "rs"));
        clock.advance(Duration.ofSeconds(1));
        assertThat(cache.probe("ns/c", connection, probe)).isEqualTo(new ArchiveReport.Reachable("7.0.2", "rs"));
    }

    @Test
    void aChangedConnectionOrAnotherClusterProbesAtOnce() {
        ProbeCache cache = new ProbeCache(Duration.ofMinutes(5), clock);
        cache.probe("ns/c", new ArchiveConnection("mongodb://a/", null), probe);
        cache.probe("ns/c", new ArchiveConnection("mongodb://b/", null), probe);
        cache.probe("ns/other", new ArchiveConnection("mongodb://b/", null), probe);
        assertThat(probes).hasValue(3);
        cache.forget("ns/other");
        cache.probe("ns/other", new ArchiveConnection("mongodb://b/", null), probe);
        assertThat(probes).hasValue(4);
    }
}
