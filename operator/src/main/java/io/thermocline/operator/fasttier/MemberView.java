package io.thermocline.operator.fasttier;

import java.util.List;

/**
 * One member as it answers {@code hello} and {@code buildInfo}, which need no credentials:
 * so even an empty member (no users yet) can be told apart from an unreachable one.
 *
 * @param configHosts the hosts this member's replica-set config lists (empty when it has none)
 */
public record MemberView(String host, Role role, String version, List<String> configHosts) {

    /** What the member says it is. */
    public enum Role {
        PRIMARY, SECONDARY,
        /** In a replica set, but neither primary nor secondary (STARTUP2, RECOVERING, ...). */
        OTHER,
        /** Answers, but has no replica-set config: a new, empty member (or one that lost its data). */
        UNINITIATED,
        UNREACHABLE;

        public boolean initiated() {
            return this == PRIMARY || this == SECONDARY || this == OTHER;
        }

        public boolean healthy() {
            return this == PRIMARY || this == SECONDARY;
        }
    }

    public MemberView {
        configHosts = configHosts == null ? List.of() : List.copyOf(configHosts);
    }

    public static MemberView unreachable(String host) {
        return new MemberView(host, Role.UNREACHABLE, null, List.of());
    }
}
