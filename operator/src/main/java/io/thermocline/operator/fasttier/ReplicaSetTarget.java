package io.thermocline.operator.fasttier;

import java.util.List;

/** The fast-tier replica set as it should be: its name, member hosts (ordinal order) and the users to ensure. */
public record ReplicaSetTarget(String replicaSetName, List<String> members, String rootUser, String rootPassword,
                               String dataPlaneUser, String dataPlanePassword) {

    public ReplicaSetTarget {
        members = List.copyOf(members);
    }

    @Override
    public String toString() {
        return "ReplicaSetTarget[" + replicaSetName + ", members=" + members + ", credentials=***]";
    }
}
