package io.thermocline.proxy.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.topology.InvalidReadPreference;
import io.thermocline.proxy.topology.MemberDescription;
import io.thermocline.proxy.topology.MemberRole;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.proxy.topology.WireLimits;
import io.thermocline.wire.OpMsg;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.ToIntFunction;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
        return new MemberDescription(
                a,
                role,
                "rs0",
                List.of(P, S1, S2),
                null,
                null,
                new WireLimits(0, 17, 16 << 20, 48_000_000, 100_000, 30),
                new BsonDocument(),
                0,
                null,
                true,
                null);
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
        if (choice instanceof MemberChoice.Unsatisfiable u) {
            return "fail 133 " + (u.mayWait() ? "after waiting" : "at once") + ": " + u.why();
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
    void choosesByTransactionPinThenCursorThenPrimaryThenReadPreference(
            String command, String pin, String cursor, boolean primaryUp, String expected) {
        BsonDocument body = BsonDocument.parse("{" + command.replace("TXN", TXN) + ", $db: 'app'}");
        CommandTraits traits = CommandTraits.of(body.getFirstKey(), OpMsg.raw(body));
        MemberChoice choice =
                MemberChoice.choose(address(pin), address(cursor), traits, topology(primaryUp), null, m -> 0, 1);
        assertThat(describe(choice)).isEqualTo(expected);
    }

    private static final long NOW = 1_000_000_000L;

    /**
     * p (dc east) and s1 (dc east) have applied Timestamp(10, 0) and written now; s2 (dc west) has applied
     * Timestamp(5, 0) and last written 120 s ago. Variants take members down, or leave the primary alone in its set.
     */
    private static TierTopology lagging(String variant) {
        boolean primaryUp = !variant.equals("noPrimary");
        Map<ServerAddress, MemberDescription> m = new LinkedHashMap<>();
        m.put(P, member(P, primaryUp ? MemberRole.PRIMARY : MemberRole.UNKNOWN, "east", 10, NOW));
        if (variant.equals("primaryOnly")) {
            return new TierTopology(Tier.ARCHIVE, "rs0", m, P);
        }
        m.put(
                S1,
                member(
                        S1,
                        variant.equals("s1Down") || variant.equals("noSecondaries")
                                ? MemberRole.UNKNOWN
                                : MemberRole.SECONDARY,
                        "east",
                        10,
                        NOW));
        m.put(
                S2,
                member(
                        S2,
                        variant.equals("noSecondaries") ? MemberRole.UNKNOWN : MemberRole.SECONDARY,
                        "west",
                        5,
                        NOW - 120_000));
        return new TierTopology(Tier.ARCHIVE, "rs0", m, primaryUp ? P : null);
    }

    private static MemberDescription member(ServerAddress a, MemberRole role, String dc, int applied, long lastWrite) {
        return new MemberDescription(
                a,
                role,
                "rs0",
                List.of(P, S1, S2),
                null,
                null,
                new WireLimits(0, 17, 16 << 20, 48_000_000, 100_000, 30),
                new BsonDocument("dc", new BsonString(dc)),
                lastWrite,
                new BsonTimestamp(applied, 0),
                true,
                null);
    }

    private static ToIntFunction<ServerAddress> loads(String spec) {
        Map<String, Integer> byHost = new HashMap<>();
        if (!spec.equals("-")) {
            for (String part : spec.split(";")) {
                String[] kv = part.split("=");
                byHost.put(kv[0].trim(), Integer.parseInt(kv[1].trim()));
            }
        }
        return a -> byHost.getOrDefault(a.getHost(), 0);
    }

    @ParameterizedTest(name = "{0} | point {1} | load {2} | {3} -> {4}")
    @CsvSource(delimiter = '|', textBlock = """
            {mode: 'primary'}                                          | -  | -         | all           | p
            {mode: 'primary'}                                          | 9  | s1=0;p=7  | all           | p
            {mode: 'primary'}                                          | -  | -         | noPrimary     | wait for a primary
            {mode: 'primaryPreferred'}                                 | 9  | p=7       | all           | p
            {mode: 'primaryPreferred'}                                 | -  | -         | noPrimary     | s1
            {mode: 'primaryPreferred'}                                 | 9  | s1=4      | noPrimary     | s1, s2 skipped as lagging
            {mode: 'secondary'}                                        | 9  | s1=4      | all           | s1, s2 skipped as lagging
            {mode: 'secondary'}                                        | -  | s1=4      | all           | s2
            {mode: 'secondary'}                                        | 4  | s1=4      | all           | s2
            {mode: 'secondary'}                                        | 9  | -         | s1Down        | s2
            {mode: 'secondary'}                                        | 9  | -         | noSecondaries | fail 133 after waiting: no secondary is known
            {mode: 'secondary'}                                        | -  | -         | primaryOnly   | fail 133 at once: no secondary is known
            {mode: 'secondary', maxStalenessSeconds: 90}               | -  | -         | s1Down        | fail 133 after waiting: no secondary is within maxStalenessSeconds 90
            {mode: 'secondaryPreferred', maxStalenessSeconds: 90}      | -  | -         | s1Down        | p
            {mode: 'secondaryPreferred'}                               | -  | -         | primaryOnly   | p
            {mode: 'nearest', tags: [{dc: 'north'}]}                   | -  | -         | all           | fail 133 after waiting: no member within max staleness matches the tag sets [{"dc": "north"}]
            {mode: 'nearest'}                                          | -  | -         | primaryOnly   | p
            {mode: 'secondaryPreferred'}                               | 9  | -         | all           | s1, s2 skipped as lagging
            {mode: 'secondaryPreferred'}                               | 9  | -         | s1Down        | p, s2 skipped as lagging
            {mode: 'secondaryPreferred'}                               | -  | -         | noSecondaries | p
            {mode: 'secondaryPreferred', tags: [{dc: 'north'}]}        | -  | -         | all           | p
            {mode: 'nearest'}                                          | 9  | p=2       | all           | s1, s2 skipped as lagging
            {mode: 'nearest'}                                          | 9  | s1=4      | all           | p, s2 skipped as lagging
            {mode: 'nearest', tags: [{dc: 'west'}]}                    | 9  | -         | all           | s2
            {mode: 'secondary', tags: [{dc: 'north'}, {dc: 'west'}]}   | -  | -         | all           | s2
            {mode: 'secondary', tags: [{dc: 'east'}, {dc: 'west'}]}    | -  | s1=9      | all           | s1
            {mode: 'secondary', tags: [{dc: 'north'}]}                 | -  | -         | all           | fail 133 after waiting: no member within max staleness matches the tag sets [{"dc": "north"}]
            {mode: 'secondary', maxStalenessSeconds: 90}               | -  | s1=9      | all           | s1
            {mode: 'secondary', maxStalenessSeconds: 150}              | -  | s1=9      | all           | s2
            {mode: 'secondary', maxStalenessSeconds: -1}               | -  | s1=9      | all           | s2
            {mode: 'secondary', maxStalenessSeconds: 89}               | -  | -         | all           | error MAX_STALENESS_OUT_OF_RANGE
            {mode: 'nearest', maxStalenessSeconds: 10}                 | -  | -         | all           | error MAX_STALENESS_OUT_OF_RANGE
            {mode: 'primary', maxStalenessSeconds: 120}                | -  | -         | all           | error BAD_VALUE
            {mode: 'primary', tags: [{dc: 'east'}]}                    | -  | -         | all           | error BAD_VALUE
            {mode: 'Secondary'}                                        | -  | -         | all           | error BAD_VALUE
            """)
    void readPreferenceModesChooseAsAMongosAmongMembersThatAppliedThePoint(
            String preference, String point, String load, String variant, String expected) {
        BsonDocument body = new BsonDocument("find", new BsonString("c"))
                .append("$readPreference", BsonDocument.parse(preference))
                .append("$db", new BsonString("app"));
        CommandTraits traits = CommandTraits.of("find", OpMsg.raw(body));
        String actual;
        try {
            MemberChoice choice = MemberChoice.choose(
                    Optional.empty(),
                    Optional.empty(),
                    traits,
                    lagging(variant),
                    point.equals("-") ? null : new BsonTimestamp(Integer.parseInt(point), 0),
                    loads(load),
                    0);
            actual = describe(choice)
                    + (choice instanceof MemberChoice.Member m && m.laggingSkipped() ? ", s2 skipped as lagging" : "");
        } catch (InvalidReadPreference e) {
            actual = "error " + e.kind();
        }
        assertThat(actual.replace(" by READ_PREFERENCE", "")).isEqualTo(expected);
    }

    /**
     * After the wait the choice asked for: the primary a mode that accepts it waited for (or the member the preference
     * selects by then), and the failure of a mode that never falls back to the primary, named as a mongos names it.
     */
    @ParameterizedTest(name = "{0} | {1} -> {2}")
    @CsvSource(delimiter = '|', textBlock = """
            {mode: 'primary'}              | noPrimary, then all            | p
            {mode: 'primary'}              | noPrimary, s1 elected, unseen  | s1
            {mode: 'secondary'}            | noSecondaries, still           | fail: no member of the archive tier (set rs0) matches read preference MODE after 2000 ms: no secondary is known
            {mode: 'secondary'}            | noSecondaries, then all        | s1
            {mode: 'secondary'}            | primaryOnly, at once           | fail: no member of the archive tier (set rs0) matches read preference MODE: no secondary is known
            """)
    void theChoiceAfterWaitingIsTheSameFunctionsAnswer(String preference, String history, String expected) {
        BsonDocument body = new BsonDocument("find", new BsonString("c"))
                .append("$readPreference", BsonDocument.parse(preference))
                .append("$db", new BsonString("app"));
        CommandTraits traits = CommandTraits.of("find", OpMsg.raw(body));
        String[] steps = history.split(", ");
        MemberChoice choice =
                MemberChoice.choose(Optional.empty(), Optional.empty(), traits, lagging(steps[0]), null, m -> 0, 0);
        String actual;
        if (choice instanceof MemberChoice.NoneEligible none) {
            // the awaited primary: P, or one elected that this topology does not show yet
            ServerAddress awaited = steps[1].startsWith("s1 elected") ? S1 : P;
            TierTopology after = lagging(steps[1].equals("then all") ? "all" : "noPrimary");
            actual = none.once(awaited, after, null, m -> 0, 0).address().getHost();
        } else {
            MemberChoice.Unsatisfiable none = (MemberChoice.Unsatisfiable) choice;
            TierTopology after = lagging(steps[1].equals("then all") ? "all" : steps[0]);
            Optional<MemberChoice.Member> again = none.again(after, null, m -> 0, 0);
            actual = again.isPresent()
                    ? again.get().address().getHost()
                    : "fail: "
                            + none.failure(
                                            after,
                                            none.mayWait() ? java.time.Duration.ofSeconds(2) : java.time.Duration.ZERO)
                                    .getMessage()
                                    .replace(none.preference().describe(), "MODE");
        }
        assertThat(actual).isEqualTo(expected);
    }
}
