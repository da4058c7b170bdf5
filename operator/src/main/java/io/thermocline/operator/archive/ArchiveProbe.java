package io.thermocline.operator.archive;

/** Checks the archive replica set: reachability, replica-set health, version. Behind an interface so tests fake the archive. */
public interface ArchiveProbe {

    ArchiveReport probe(ArchiveConnection connection);
}
