package io.thermocline.operator.archive;

/** What probing the archive found: reachable with a version, or a reason it is not usable. */
public sealed interface ArchiveReport {

    /** Reachable, a replica set with a primary. */
    record Reachable(String version, String replicaSetName) implements ArchiveReport {
    }

    /**
     * Not usable. {@code reason} is a CamelCase condition reason ({@code SecretNotFound},
     * {@code Unreachable}, {@code NotAReplicaSet}, ...), {@code message} says what to do.
     */
    record Unusable(String reason, String message) implements ArchiveReport {
    }
}
