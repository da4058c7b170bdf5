package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import org.bson.BsonDocument;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Chooses the member of a tier that serves a request, following the server-selection rules for
 * read preferences (mode, tag sets, max staleness measured against the primary's last write).
 * A pure function: the caller supplies the topology and a spreading value for secondaries.
 */
public final class MemberSelector {

    private MemberSelector() {
    }

    public static Optional<ServerAddress> select(TierTopology topology, ReadPreference preference, int spread) {
        Optional<ServerAddress> primary = topology.primaryAddress();
        return switch (preference.mode()) {
            case PRIMARY -> primary;
            case PRIMARY_PREFERRED -> primary.or(() -> pick(eligibleSecondaries(topology, preference), spread));
            case SECONDARY -> pick(eligibleSecondaries(topology, preference), spread);
            case SECONDARY_PREFERRED -> pick(eligibleSecondaries(topology, preference), spread).or(() -> primary);
            case NEAREST -> {
                List<ServerAddress> all = new ArrayList<>(eligibleSecondaries(topology, preference));
                primary.filter(p -> matchesTags(topology.members().get(p), preference)).ifPresent(all::add);
                yield pick(all, spread);
            }
        };
    }

    private static List<ServerAddress> eligibleSecondaries(TierTopology topology, ReadPreference preference) {
        long primaryWrite = topology.primaryAddress().map(p -> topology.members().get(p))
                .map(MemberDescription::lastWriteMillis).orElse(0L);
        List<ServerAddress> out = new ArrayList<>();
        for (MemberDescription m : topology.secondaries()) {
            if (!matchesTags(m, preference)) {
                continue;
            }
            if (preference.maxStalenessSeconds() > 0 && primaryWrite > 0 && m.lastWriteMillis() > 0
                    && primaryWrite - m.lastWriteMillis() > preference.maxStalenessSeconds() * 1000) {
                continue;
            }
            out.add(m.address());
        }
        out.sort((a, b) -> a.toString().compareTo(b.toString()));
        return out;
    }

    private static boolean matchesTags(MemberDescription member, ReadPreference preference) {
        if (member == null) {
            return false;
        }
        if (preference.tagSets().isEmpty()) {
            return true;
        }
        for (BsonDocument set : preference.tagSets()) {
            if (member.tagsMatch(set)) {
                return true;
            }
        }
        return false;
    }

    private static Optional<ServerAddress> pick(List<ServerAddress> candidates, int spread) {
        if (candidates.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(candidates.get(Math.floorMod(spread, candidates.size())));
    }
}
