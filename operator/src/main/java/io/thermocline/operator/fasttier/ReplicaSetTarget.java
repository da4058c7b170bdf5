package io.thermocline.operator.fasttier;

import io.thermocline.operator.credentials.FastTierUser;
import java.util.List;
import java.util.Set;

/**
 * The fast-tier replica set as it should be, and what the operator knows about its pods.
 *
 * @param members      the member hosts wanted (ordinal order)
 * @param podHosts     the hosts whose pods the StatefulSet runs now (during a scale-down, more than {@code members})
 * @param outdated     hosts whose pod runs an older pod template than the StatefulSet's (e.g. the previous version)
 * @param version      the mongod version (x.y.z) the pods are to run
 * @param initiated    the status records that this replica set was initiated once: never initiate it again
 * @param users        the users the operator keeps on it (the operator's own and one per data-plane part)
 * @param featureCompatibilityVersion the FCV to raise it to once every member runs that series or later; null: leave it
 */
public record ReplicaSetTarget(
        String replicaSetName,
        List<String> members,
        List<String> podHosts,
        Set<String> outdated,
        String version,
        boolean initiated,
        String rootUser,
        String rootPassword,
        List<FastTierUser> users,
        String featureCompatibilityVersion) {

    public ReplicaSetTarget {
        members = List.copyOf(members);
        podHosts = List.copyOf(podHosts);
        outdated = Set.copyOf(outdated);
        users = List.copyOf(users);
    }

    /** With the featureCompatibilityVersion left where it is. */
    public ReplicaSetTarget(
            String replicaSetName,
            List<String> members,
            List<String> podHosts,
            Set<String> outdated,
            String version,
            boolean initiated,
            String rootUser,
            String rootPassword,
            List<FastTierUser> users) {
        this(replicaSetName, members, podHosts, outdated, version, initiated, rootUser, rootPassword, users, null);
    }

    @Override
    public String toString() {
        return "ReplicaSetTarget[" + replicaSetName + ", members=" + members + ", pods=" + podHosts + ", outdated="
                + outdated + ", version=" + version + ", initiated=" + initiated + ", credentials=***]";
    }
}
