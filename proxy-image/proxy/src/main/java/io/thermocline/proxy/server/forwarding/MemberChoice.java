package io.thermocline.proxy.server.forwarding;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.topology.MemberSelector;
import io.thermocline.proxy.topology.ReadPreference;
import io.thermocline.proxy.topology.TierTopology;

import java.util.Optional;

/**
 * Which member of a tier serves a command, as one pure function holding the whole precedence:
 * the member the command's transaction is pinned to, then the member that holds its cursor, then
 * (a transaction statement without a pin yet, or its commit or abort) the primary, then the read
 * preference. A client's causal point ({@code afterClusterTime}) travels to the chosen member in
 * the command's read concern and the member waits for it, so it does not narrow the choice.
 */
public sealed interface MemberChoice {

    /** This member, decided: a transaction's or a cursor's, or one the read preference selected. */
    record Member(ServerAddress address, Why why) implements MemberChoice {
    }

    /** The primary, once one is known; {@code pin} when the transaction's later statements must follow it there. */
    record Primary(boolean pin) implements MemberChoice {
    }

    /** No member fits the read preference right now (an election, a restart): wait for a primary, then choose again. */
    record NoneEligible(ReadPreference preference) implements MemberChoice {
    }

    enum Why { TRANSACTION_PIN, CURSOR, READ_PREFERENCE }

    /**
     * @param transactionPin the member this command's transaction (same session, same txnNumber, same tier) ran on so far
     * @param cursorMember   the member holding the cursor the command continues (getMore)
     * @param spread         any number, varied per call: spreads reads over equally eligible secondaries
     */
    static MemberChoice choose(Optional<ServerAddress> transactionPin, Optional<ServerAddress> cursorMember,
                               CommandTraits traits, TierTopology topology, int spread) {
        if (traits.inTransaction() && transactionPin.isPresent()) {
            return new Member(transactionPin.get(), Why.TRANSACTION_PIN);
        }
        if (cursorMember.isPresent()) {
            return new Member(cursorMember.get(), Why.CURSOR);
        }
        if (traits.inTransaction() || traits.endsTransaction()) {
            return new Primary(traits.inTransaction() && traits.session().isPresent());
        }
        ReadPreference preference = ReadPreference.parse(traits.readPreference());
        return MemberSelector.select(topology, preference, spread)
                .<MemberChoice>map(m -> new Member(m, Why.READ_PREFERENCE))
                .orElseGet(() -> new NoneEligible(preference));
    }
}
