package io.thermocline.operator.archive;

/** What probing the archive found: reachable with a version, or a reason it is not usable. */
public sealed interface ArchiveReport {

    /** Reachable, a replica set with a primary; {@code privileges}: what its user may do. */
    record Reachable(String version, String replicaSetName, ArchivePrivileges privileges) implements ArchiveReport {
        public Reachable {
            privileges = privileges == null ? ArchivePrivileges.UNCHECKED : privileges;
        }

        public Reachable(String version, String replicaSetName) {
            this(version, replicaSetName, ArchivePrivileges.UNCHECKED);
        }
    }

    /**
     * Not usable. {@code reason} is a CamelCase condition reason ({@code SecretNotFound},
     * {@code Unreachable}, {@code NotAReplicaSet}, ...), {@code message} says what to do.
     */
    record Unusable(String reason, String message) implements ArchiveReport {
    }
}
