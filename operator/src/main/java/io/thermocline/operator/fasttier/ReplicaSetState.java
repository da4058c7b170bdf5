package io.thermocline.operator.fasttier;

import java.util.List;

/**
 * Where the fast-tier replica set stands after one {@link ReplicaSetSteps#next} step.
 * {@code configured} lists the hosts of its configuration (empty: not initiated, or not readable now).
 */
public sealed interface ReplicaSetState {

    List<String> configured();

    /** Whether this step saw the replica set initiated (what the status records, so it is never initiated twice). */
    default boolean initiated() {
        return !configured().isEmpty();
    }

    /** Initiated, its configuration lists exactly the target members, every pod current, FCV set. */
    record Converged(List<String> configured, String featureCompatibilityVersion) implements ReplicaSetState {
        public Converged {
            configured = List.copyOf(configured);
        }
    }

    /** Not there yet (being initiated, a member added or removed, a primary stepping down, unreachable): {@code reason} is CamelCase. */
    record Converging(String reason, String message, List<String> configured) implements ReplicaSetState {
        public Converging {
            configured = List.copyOf(configured);
        }

        public Converging(String reason, String message) {
            this(reason, message, List.of());
        }
    }

    /** The pod of {@code host} is to be deleted now, so that it restarts on the current pod template (rolling upgrade). */
    record RestartMember(String host, String reason, String message, List<String> configured) implements ReplicaSetState {
        public RestartMember {
            configured = List.copyOf(configured);
        }
    }
}
