package io.thermocline.operator.fasttier;

import java.util.ArrayList;
import java.util.List;

/** The parts of a replica-set configuration the operator changes: its version and members. */
public record ReplicaSetConfig(int version, List<Member> members) {

    /**
     * One configured member. {@code newlyAdded} is what MongoDB 4.4+ sets on a member added by
     * reconfig until its initial sync ends: it does not vote (nor count for the majority) meanwhile.
     */
    public record Member(int id, String host, boolean newlyAdded) {
    }

    public ReplicaSetConfig {
        members = List.copyOf(members);
    }

    public List<String> hosts() {
        return members.stream().map(Member::host).toList();
    }

    public boolean contains(String host) {
        return hosts().contains(host);
    }

    /** The next configuration with {@code host} added under a fresh {@code _id} (a new member, never a reused id). */
    public ReplicaSetConfig adding(String host) {
        int id = members.stream().mapToInt(Member::id).max().orElse(-1) + 1;
        List<Member> next = new ArrayList<>(members);
        next.add(new Member(id, host, true));
        return new ReplicaSetConfig(version + 1, next);
    }

    public ReplicaSetConfig removing(String host) {
        return new ReplicaSetConfig(version + 1, members.stream().filter(m -> !m.host().equals(host)).toList());
    }
}
