package io.thermocline.operator.fasttier;

import java.util.List;

/** Where the fast-tier replica set stands after an {@link ReplicaSetInitiator#ensure} step. */
public sealed interface ReplicaSetState {

    /** Initiated, and its configuration lists exactly the target members. */
    record Converged(List<String> members) implements ReplicaSetState {
    }

    /** Not there yet (being initiated, a member being added or removed, or unreachable): {@code reason} is CamelCase. */
    record Converging(String reason, String message) implements ReplicaSetState {
    }
}
