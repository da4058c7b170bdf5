package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** An immutable snapshot of one tier: its members and which of them is primary. */
public record TierTopology(
        Tier tier, String setName, Map<ServerAddress, MemberDescription> members, ServerAddress primary) {

    public Optional<ServerAddress> primaryAddress() {
        return Optional.ofNullable(primary);
    }

    public List<MemberDescription> secondaries() {
        return members.values().stream()
                .filter(m -> m.role() == MemberRole.SECONDARY)
                .toList();
    }

    /**
     * The limits to advertise for this tier: the primary's, else any data-bearing member's
     * (a client can still read from secondaries while an election runs).
     */
    public Optional<WireLimits> limits() {
        if (primary != null
                && members.get(primary) != null
                && members.get(primary).limits() != null) {
            return Optional.of(members.get(primary).limits());
        }
        return members.values().stream()
                .filter(m -> m.role().dataBearing() && m.limits() != null)
                .map(MemberDescription::limits)
                .findFirst();
    }

    /** The writable member of {@code members}, or null. */
    static ServerAddress primaryOf(Map<ServerAddress, MemberDescription> members) {
        for (MemberDescription m : members.values()) {
            if (m.role().writable()) {
                return m.address();
            }
        }
        return null;
    }
}
