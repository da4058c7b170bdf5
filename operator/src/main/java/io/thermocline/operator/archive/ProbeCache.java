package io.thermocline.operator.archive;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Remembers each cluster's last archive report for a while, so a burst of reconciles
 * (pods starting, rolling updates) probes the archive once, not once per event. A changed
 * connection string or CA probes at once.
 */
public final class ProbeCache {

    private record Entry(int connectionHash, Instant at, ArchiveReport report) {
    }

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final Duration ttl;
    private final Clock clock;

    public ProbeCache(Duration ttl, Clock clock) {
        this.ttl = ttl;
        this.clock = clock;
    }

    public ArchiveReport probe(String cluster, ArchiveConnection connection, ArchiveProbe probe) {
        int hash = connection.hashCode();
        Instant now = clock.instant();
        Entry entry = entries.get(cluster);
        if (entry != null && entry.connectionHash() == hash && entry.at().plus(ttl).isAfter(now)) {
            return entry.report();
        }
        ArchiveReport report = probe.probe(connection);
        entries.put(cluster, new Entry(hash, now, report));
        return report;
    }

    public void forget(String cluster) {
        entries.remove(cluster);
    }
}
