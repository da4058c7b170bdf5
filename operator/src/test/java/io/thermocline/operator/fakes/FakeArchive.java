package io.thermocline.operator.fakes;

import io.quarkus.test.Mock;
import io.thermocline.operator.archive.ArchiveConnection;
import io.thermocline.operator.archive.ArchiveProbe;
import io.thermocline.operator.archive.ArchiveReport;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/** The archive as tests want it: a report they set, and a count of probes (each probe is one reconcile). */
@Mock
@ApplicationScoped
public class FakeArchive implements ArchiveProbe {

    public static final String VERSION = "7.0.14";
    private final AtomicReference<ArchiveReport> report = new AtomicReference<>();
    // every URI probed: clusters of earlier tests keep being probed, so "the last one" is racy
    private final Set<String> probedUris = ConcurrentHashMap.newKeySet();
    private final AtomicInteger probes = new AtomicInteger();
    private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
    // which namespaces hold documents (empty: an empty archive); null: the archive cannot be asked
    private final AtomicReference<Set<String>> holdingData = new AtomicReference<>();

    public FakeArchive() {
        reset();
    }

    public void reset() {
        report.set(new ArchiveReport.Reachable(VERSION, "archive-rs"));
        probedUris.clear();
        failure.set(null);
        holdingData.set(Set.of());
    }

    /** The namespaces (db.coll) that hold documents; null: asking which fails. */
    public void holding(Set<String> namespaces) {
        holdingData.set(namespaces);
    }


    /** Every probe throws, as a bug or an unexpected driver error would. */
    public void failWith(RuntimeException e) {
        failure.set(e);
    }

    public void answer(ArchiveReport next) {
        report.set(next);
    }

    public int probes() {
        return probes.get();
    }

    public Set<String> probedUris() {
        return Set.copyOf(probedUris);
    }

    @Override
    public ArchiveReport probe(ArchiveConnection connection) {
        probedUris.add(connection.uri());
        probes.incrementAndGet();
        if (failure.get() != null) {
            throw failure.get();
        }
        return report.get();
    }

    @Override
    public Optional<List<String>> holdingData(ArchiveConnection connection, List<String> namespaces) {
        Set<String> holding = holdingData.get();
        return holding == null ? Optional.empty() : Optional.of(namespaces.stream().filter(holding::contains).toList());
    }
}
