package io.thermocline.proxy.server.forwarding;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.topology.MemberDescription;
import io.thermocline.proxy.topology.MemberRole;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.proxy.topology.WireLimits;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(10)
class MemberChoiceTest {
    private static final ServerAddress P = new ServerAddress("p", 1);
    private static final ServerAddress S1 = new ServerAddress("s1", 1);
    private static final ServerAddress S2 = new ServerAddress("s2", 1);

    private static final String TXN = "lsid: {id: 1}, txnNumber: {$numberLong: '5'}, autocommit: false";

    private static TierTopology topology(boolean primaryUp) {
        Map<ServerAddress, MemberDescription> m = new LinkedHashMap<>();
        m.put(P, member(P, primaryUp ? MemberRole.PRIMARY : MemberRole.UNKNOWN));
        m.put(S1, member(S1, MemberRole.SECONDARY));
        m.put(S2, member(S2, MemberRole.SECONDARY));
        return new TierTopology(Tier.ARCHIVE, "rs0", m, primaryUp ? P : null);
    }

    private static MemberDescription member(ServerAddress a, MemberRole role) {
        return new MemberDescription(a, role, "rs0", List.of(P, S1, S2), null, null,
                new WireLimits(0, 17, 16 << 20, 48_000_000, 100_000, 30), new BsonDocument(), 0, true, null);
    }

    private static Optional<ServerAddress> address(String host) {
        return host.equals("-") ? Optional.empty() : Optional.of(new ServerAddress(host, 1));
    }

    private static String describe(MemberChoice choice) {
        if (choice instanceof MemberChoice.Member m) {
            return m.address().getHost() + " by " + m.why();
        }
        if (choice instanceof MemberChoice.Primary p) {
            return p.pin() ? "primary, pinned" : "primary";
        }
        return "wait for a primary";
    }

    @ParameterizedTest(name = "{0} | pin {1} | cursor {2} | primary up {3} -> {4}")
    @CsvSource(delimiter = '|', textBlock = """
            find: 'c', $readPreference: {mode: 'secondary'}, TXN            | s2 | -  | true  | s2 by TRANSACTION_PIN
            getMore: {$numberLong: '9'}, TXN                                 | s2 | s2 | true  | s2 by TRANSACTION_PIN
            getMore: {$numberLong: '9'}, lsid: {id: 1}                       | s2 | s1 | true  | s1 by CURSOR
            getMore: {$numberLong: '9'}                                      | -  | s1 | false | s1 by CURSOR
            find: 'c', TXN                                                   | -  | -  | true  | primary, pinned
            find: 'c', txnNumber: {$numberLong: '5'}, autocommit: false      | -  | -  | true  | primary
            commitTransaction: 1, TXN                                        | p  | -  | true  | p by TRANSACTION_PIN
            commitTransaction: 1, lsid: {id: 1}                              | -  | -  | true  | primary
            insert: 'c', lsid: {id: 1}, txnNumber: {$numberLong: '5'}        | s1 | -  | true  | p by READ_PREFERENCE
            find: 'c'                                                        | -  | -  | true  | p by READ_PREFERENCE
            find: 'c', $readPreference: {mode: 'secondary'}                  | -  | -  | true  | s2 by READ_PREFERENCE
            find: 'c', $readPreference: {mode: 'primaryPreferred'}           | -  | -  | false | s2 by READ_PREFERENCE
            find: 'c'                                                        | -  | -  | false | wait for a primary
            find: 'c', readConcern: {afterClusterTime: {$timestamp: {t: 9, i: 1}}} | - | - | true | p by READ_PREFERENCE
            """)
    void choosesByTransactionPinThenCursorThenPrimaryThenReadPreference(String command, String pin, String cursor,
                                                                           boolean primaryUp, String expected) {
        BsonDocument body = BsonDocument.parse("{" + command.replace("TXN", TXN) + ", $db: 'app'}");
        CommandTraits traits = CommandTraits.of(body.getFirstKey(), OpMsg.raw(body));
        MemberChoice choice = MemberChoice.choose(address(pin), address(cursor), traits, topology(primaryUp), 1);
        assertThat(describe(choice)).isEqualTo(expected);
    }
}
