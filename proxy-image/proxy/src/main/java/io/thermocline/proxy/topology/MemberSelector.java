package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.ToIntFunction;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;

/**
 * Chooses the member of a tier that serves a read, in two steps. First the members the read preference
 * allows, by the server-selection rules a mongos follows (mode, max staleness against the primary's or the
 * freshest secondary's last write, the first tag set any of them matches). Then the causal point: among
 * those, only members whose applied optime (from monitoring) covers the point the read must see; when none
 * of them does, the primary if the mode accepts it, else (mode {@code secondary}) one of them anyway, which
 * then waits for the point itself ({@code afterClusterTime}) — never an answer from behind the point.
 * Among the members left, the one with the fewest requests in flight. A pure function.
 */
public final class MemberSelector {

    /**
     * The member chosen; {@code laggingSkipped}: a member the read preference allowed was passed over because it had
     * not applied the point yet (a wait on that member avoided).
     */
    public record Selection(ServerAddress member, boolean secondary, boolean laggingSkipped) {}

    private MemberSelector() {}

    /**
     * @param point  a time of this tier's clock the serving member must have applied, or null (any member the
     *               preference allows)
     * @param load   requests in flight per member
     * @param spread any number, varied per call: breaks ties between equally loaded members
     */
    public static Optional<Selection> select(
            TierTopology topology,
            ReadPreference preference,
            BsonTimestamp point,
            ToIntFunction<ServerAddress> load,
            int spread) {
        Optional<ServerAddress> primary = topology.primaryAddress();
        List<MemberDescription> allowed = allowed(topology, preference);
        if (allowed.isEmpty()) {
            return Optional.empty();
        }
        List<MemberDescription> caughtUp = caughtUp(allowed, point);
        if (!caughtUp.isEmpty()) {
            return Optional.of(least(caughtUp, load, spread, caughtUp.size() < allowed.size()));
        }
        boolean primaryAccepted = preference.mode() == ReadPreference.Mode.PRIMARY_PREFERRED
                || preference.mode() == ReadPreference.Mode.SECONDARY_PREFERRED;
        if (primaryAccepted && primary.isPresent()) {
            return Optional.of(new Selection(primary.get(), false, true));
        }
        return Optional.of(least(allowed, load, spread, false));
    }

    /**
     * Why no member is allowed for {@code preference} (its mode never falls back to the primary): for the
     * {@code FailedToSatisfyReadPreference} message, naming the condition the client can change.
     */
    public static String whyNone(TierTopology topology, ReadPreference preference) {
        List<MemberDescription> secondaries = topology.secondaries();
        if (secondaries.isEmpty() && (preference.mode() != ReadPreference.Mode.NEAREST || topology.primary() == null)) {
            return preference.mode() == ReadPreference.Mode.NEAREST
                    ? "no primary or secondary is known"
                    : "no secondary is known";
        }
        ReadPreference untagged = new ReadPreference(preference.mode(), List.of(), preference.maxStalenessSeconds());
        if (preference.maxStalenessSeconds() > 0
                && suitable(topology, untagged, preference.mode() == ReadPreference.Mode.NEAREST)
                        .isEmpty()) {
            return "no secondary is within maxStalenessSeconds " + preference.maxStalenessSeconds();
        }
        return "no member within max staleness matches the tag sets " + preference.tagSets();
    }

    /**
     * Whether a member that could ever satisfy {@code preference} exists in the tier: a secondary, or a member not
     * reachable or not yet in a readable state (it may become one). False for a set whose only data-bearing member is
     * the primary: no topology change short of a reconfiguration gives mode {@code secondary} a member.
     */
    public static boolean mayBecomeSatisfiable(TierTopology topology, ReadPreference preference) {
        boolean withPrimary = preference.mode() == ReadPreference.Mode.NEAREST;
        return topology.members().values().stream().anyMatch(m -> switch (m.role()) {
            case SECONDARY, UNKNOWN, OTHER -> !m.address().equals(topology.primary()) || withPrimary;
            case PRIMARY -> withPrimary;
            default -> false;
        });
    }

    /** The members a mongos could send the read to, before the causal point is considered. */
    static List<MemberDescription> allowed(TierTopology topology, ReadPreference preference) {
        Optional<MemberDescription> primary =
                topology.primaryAddress().map(p -> topology.members().get(p));
        return switch (preference.mode()) {
            case PRIMARY -> primary.map(List::of).orElse(List.of());
            case PRIMARY_PREFERRED -> primary.map(List::of).orElseGet(() -> suitable(topology, preference, false));
            case SECONDARY -> suitable(topology, preference, false);
            case SECONDARY_PREFERRED -> {
                List<MemberDescription> secondaries = suitable(topology, preference, false);
                yield secondaries.isEmpty() ? primary.map(List::of).orElse(List.of()) : secondaries;
            }
            case NEAREST -> suitable(topology, preference, true);
        };
    }

    /** Secondaries (and the primary, for nearest) within max staleness, narrowed by the first tag set any of them matches. */
    private static List<MemberDescription> suitable(
            TierTopology topology, ReadPreference preference, boolean withPrimary) {
        List<MemberDescription> fresh = new ArrayList<>();
        long reference = stalenessReference(topology);
        for (MemberDescription m : topology.secondaries()) {
            if (preference.maxStalenessSeconds() <= 0
                    || reference == 0
                    || m.lastWriteMillis() == 0
                    || reference - m.lastWriteMillis() <= preference.maxStalenessSeconds() * 1000) {
                fresh.add(m);
            }
        }
        if (withPrimary) {
            topology.primaryAddress().map(p -> topology.members().get(p)).ifPresent(fresh::add);
        }
        if (preference.tagSets().isEmpty()) {
            return fresh;
        }
        for (BsonDocument set : preference.tagSets()) {
            List<MemberDescription> matching =
                    fresh.stream().filter(m -> m.tagsMatch(set)).toList();
            if (!matching.isEmpty()) {
                return matching;
            }
        }
        return List.of();
    }

    /** The primary's last write, else (no primary known) the freshest secondary's, as the max-staleness spec measures. */
    private static long stalenessReference(TierTopology topology) {
        return topology.primaryAddress()
                .map(p -> topology.members().get(p))
                .map(MemberDescription::lastWriteMillis)
                .orElseGet(() -> topology.secondaries().stream()
                        .mapToLong(MemberDescription::lastWriteMillis)
                        .max()
                        .orElse(0));
    }

    /** The members that have applied {@code point} (the primary always counts as having it); {@code members} when all have. */
    private static List<MemberDescription> caughtUp(List<MemberDescription> members, BsonTimestamp point) {
        List<MemberDescription> caughtUp = null;
        for (int i = 0; i < members.size(); i++) {
            MemberDescription m = members.get(i);
            boolean covers = m.role() == MemberRole.PRIMARY || m.applied(point);
            if (!covers && caughtUp == null) {
                caughtUp = new ArrayList<>(members.subList(0, i));
            } else if (covers && caughtUp != null) {
                caughtUp.add(m);
            }
        }
        return caughtUp == null ? members : caughtUp;
    }

    /**
     * The least loaded of {@code members}; among equally loaded ones, the {@code spread}-th in the order of their
     * addresses. Loads are read once each (counts move); a lone member is chosen without reading its load.
     */
    private static Selection least(
            List<MemberDescription> members, ToIntFunction<ServerAddress> load, int spread, boolean laggingSkipped) {
        MemberDescription chosen;
        if (members.size() == 1) {
            chosen = members.get(0);
        } else {
            int fewest = Integer.MAX_VALUE;
            List<MemberDescription> least = new ArrayList<>(members.size());
            for (MemberDescription m : members) {
                int l = load.applyAsInt(m.address());
                if (l < fewest) {
                    fewest = l;
                    least.clear();
                }
                if (l == fewest) {
                    least.add(m);
                }
            }
            if (least.size() > 1) {
                least.sort(Comparator.comparing(m -> m.address().toString()));
            }
            chosen = least.get(Math.floorMod(spread, least.size()));
        }
        return new Selection(chosen.address(), chosen.role() == MemberRole.SECONDARY, laggingSkipped);
    }
}
