package io.thermocline.proxy.gateway;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.topology.MemberSelector;
import io.thermocline.proxy.topology.ReadPreference;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.proxy.topology.UnsatisfiableReadPreference;
import java.time.Duration;
import java.util.Optional;
import java.util.function.ToIntFunction;
import org.bson.BsonTimestamp;

/**
 * Which member of a tier serves a command, as one pure function holding the whole precedence:
 * the member the command's transaction is pinned to, then the member that holds its cursor, then
 * (a transaction statement without a pin yet, or its commit or abort) the primary, then the read
 * preference narrowed by the read's causal point ({@link MemberSelector}): a secondary serves a read
 * only when the preference allows it and, preferably, its applied optime already covers the point
 * the command carries as {@code afterClusterTime}, which it also waits for. A choice that must wait (for a
 * primary, or for a member that fits) is finished here too, from the topology after the wait
 * ({@link NoneEligible#once}, {@link Unsatisfiable#again}, {@link Unsatisfiable#failure}): the {@link Forwarder}
 * only waits, so no second class decides which member serves.
 */
public sealed interface MemberChoice {

    /**
     * This member, decided: a transaction's or a cursor's, or one the read preference selected;
     * {@code laggingSkipped}: a member the preference allowed was passed over as behind the read's point.
     */
    record Member(ServerAddress address, Why why, boolean laggingSkipped) implements MemberChoice {}

    /** The primary, once one is known; {@code pin} when the transaction's later statements must follow it there. */
    record Primary(boolean pin) implements MemberChoice {

        /** The member, once the primary is known. */
        public Member at(ServerAddress primary) {
            return new Member(primary, Why.TRANSACTION, false);
        }
    }

    /**
     * No member fits a read preference that accepts the primary ({@code primary}, {@code primaryPreferred},
     * {@code secondaryPreferred}) right now (an election, a restart): wait for a primary, then choose again.
     */
    record NoneEligible(ReadPreference preference) implements MemberChoice {

        /**
         * The choice once {@code primary} is known: the member the preference selects in {@code topology} now, or that
         * primary (arguments as {@link #choose}).
         */
        public Member once(
                ServerAddress primary,
                TierTopology topology,
                BsonTimestamp point,
                ToIntFunction<ServerAddress> load,
                int spread) {
            return selected(topology, preference, point, load, spread)
                    .orElse(new Member(primary, Why.READ_PREFERENCE, false));
        }
    }

    /**
     * No member fits a mode that never falls back to the primary ({@code secondary}, {@code nearest} with tags):
     * the read fails with {@code FailedToSatisfyReadPreference}, never served by a member the preference excludes.
     * {@code mayWait}: a member that could fit exists (a secondary that is stale, tagged otherwise, down or
     * recovering), so the choice is retried as the topology changes until the server-selection timeout, as the
     * server-selection specification's loop and a mongos do; without one (a set with no secondary at all) it fails at once.
     */
    record Unsatisfiable(ReadPreference preference, String why, boolean mayWait) implements MemberChoice {

        /** The choice again as {@code topology} changed while the read waited (arguments as {@link #choose}); empty: none yet. */
        public Optional<Member> again(
                TierTopology topology, BsonTimestamp point, ToIntFunction<ServerAddress> load, int spread) {
            return selected(topology, preference, point, load, spread);
        }

        /** What the client is told when no member fitted, {@code waited} after the choice (zero: at once). */
        public UnsatisfiableReadPreference failure(TierTopology topology, Duration waited) {
            return new UnsatisfiableReadPreference("no member of the "
                    + topology.tier().label() + " tier"
                    + (topology.setName() == null ? "" : " (set " + topology.setName() + ")")
                    + " matches read preference " + preference.describe()
                    + (mayWait ? " after " + waited.toMillis() + " ms: " : ": ")
                    + MemberSelector.whyNone(topology, preference));
        }
    }

    /** {@code TRANSACTION}: the primary a transaction's statement or its end goes to, once known. */
    enum Why {
        TRANSACTION_PIN,
        CURSOR,
        TRANSACTION,
        READ_PREFERENCE
    }

    /**
     * @param transactionPin the member this command's transaction (same session, same txnNumber, same tier) ran on so far
     * @param cursorMember   the member holding the cursor the command continues (getMore)
     * @param point          the time of this tier's clock the serving member must have applied (the
     *                       {@code afterClusterTime} the member gets), or null
     * @param load           requests in flight per member: reads go to the least loaded eligible member
     * @param spread         any number, varied per call: breaks ties between equally loaded members
     * @throws io.thermocline.proxy.topology.InvalidReadPreference for a read preference a mongos refuses
     */
    static MemberChoice choose(
            Optional<ServerAddress> transactionPin,
            Optional<ServerAddress> cursorMember,
            CommandTraits traits,
            TierTopology topology,
            BsonTimestamp point,
            ToIntFunction<ServerAddress> load,
            int spread) {
        if (traits.inTransaction() && transactionPin.isPresent()) {
            return new Member(transactionPin.get(), Why.TRANSACTION_PIN, false);
        }
        if (cursorMember.isPresent()) {
            return new Member(cursorMember.get(), Why.CURSOR, false);
        }
        if (traits.inTransaction() || traits.endsTransaction()) {
            return new Primary(traits.inTransaction() && traits.session().isPresent());
        }
        ReadPreference preference = ReadPreference.parse(traits.readPreference());
        return selected(topology, preference, point, load, spread)
                .<MemberChoice>map(m -> m)
                .orElseGet(() -> preference.mode().acceptsPrimary()
                        ? new NoneEligible(preference)
                        : new Unsatisfiable(
                                preference,
                                MemberSelector.whyNone(topology, preference),
                                MemberSelector.mayBecomeSatisfiable(topology, preference)));
    }

    /** The member {@code preference} selects among those that applied {@code point}, preferring the least loaded. */
    private static Optional<Member> selected(
            TierTopology topology,
            ReadPreference preference,
            BsonTimestamp point,
            ToIntFunction<ServerAddress> load,
            int spread) {
        return MemberSelector.select(topology, preference, point, load, spread)
                .map(s -> new Member(s.member(), Why.READ_PREFERENCE, s.laggingSkipped()));
    }
}
