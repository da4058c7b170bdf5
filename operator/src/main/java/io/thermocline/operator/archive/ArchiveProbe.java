package io.thermocline.operator.archive;

import java.util.List;
import java.util.Optional;

/** Checks the archive replica set: reachability, replica-set health, version. Behind an interface so tests fake the archive. */
public interface ArchiveProbe {

    ArchiveReport probe(ArchiveConnection connection);

    /**
     * Which of {@code namespaces} ({@code db.collection}) hold at least one document in the archive; empty when the
     * archive cannot be asked (also the answer of a probe that cannot tell). Decides a new cluster's starting mode
     * (docs/operator.md, "Modes"): unknown starts in shadow, the safe side.
     */
    default Optional<List<String>> holdingData(ArchiveConnection connection, List<String> namespaces) {
        return Optional.empty();
    }
}
