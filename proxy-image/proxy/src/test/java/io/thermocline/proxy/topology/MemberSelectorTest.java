package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class MemberSelectorTest {
    private static final ServerAddress P = new ServerAddress("p", 1);
    private static final ServerAddress S1 = new ServerAddress("s1", 1);
    private static final ServerAddress S2 = new ServerAddress("s2", 1);
    private static final long NOW = 1_000_000_000L;

    private static MemberDescription member(ServerAddress a, MemberRole role, String tagsJson, long lastWrite) {
        return new MemberDescription(a, role, "rs0", List.of(P, S1, S2), null, null,
                new WireLimits(0, 17, 16 << 20, 48_000_000, 100_000, 30), BsonDocument.parse(tagsJson), lastWrite, null, true, null);
    }

    /** Topologies by name: all up; primary down; secondaries down; s2 lagging 120 s. */
    private static TierTopology topology(String name) {
        Map<ServerAddress, MemberDescription> m = new LinkedHashMap<>();
        boolean primaryUp = !name.equals("noPrimary");
        boolean secondariesUp = !name.equals("noSecondaries");
        m.put(P, member(P, primaryUp ? MemberRole.PRIMARY : MemberRole.UNKNOWN, "{dc: 'east'}", NOW));
        m.put(S1, member(S1, secondariesUp ? MemberRole.SECONDARY : MemberRole.UNKNOWN, "{dc: 'east'}", NOW));
        m.put(S2, member(S2, secondariesUp ? MemberRole.SECONDARY : MemberRole.UNKNOWN, "{dc: 'west'}",
                name.equals("lagging") ? NOW - 120_000 : NOW));
        return new TierTopology(Tier.ARCHIVE, "rs0", m, primaryUp ? P : null);
    }

    @ParameterizedTest(name = "{0} on {1} (spread {3}) -> {4}")
    @CsvSource(delimiter = '|', textBlock = """
            primary            | allUp         | {}                                      | 0 | p
            primary            | noPrimary     | {}                                      | 0 | none
            primaryPreferred   | allUp         | {}                                      | 1 | p
            primaryPreferred   | noPrimary     | {}                                      | 0 | s1
            secondary          | allUp         | {}                                      | 0 | s1
            secondary          | allUp         | {}                                      | 1 | s2
            secondary          | noSecondaries | {}                                      | 0 | none
            secondaryPreferred | noSecondaries | {}                                      | 0 | p
            secondaryPreferred | allUp         | {tags: [{dc: 'west'}]}                  | 0 | s2
            secondary          | allUp         | {tags: [{dc: 'north'}, {dc: 'east'}]}   | 1 | s1
            secondary          | allUp         | {tags: [{dc: 'north'}]}                 | 0 | none
            secondaryPreferred | allUp         | {tags: [{dc: 'north'}]}                 | 0 | p
            secondary          | lagging       | {maxStalenessSeconds: 150}              | 1 | s2
            secondary          | lagging       | {maxStalenessSeconds: 90}               | 1 | s1
            nearest            | allUp         | {}                                      | 3 | p
            nearest            | allUp         | {tags: [{dc: 'east'}]}                  | 2 | p
            """)
    void choosesTheMemberTheReadPreferenceAllows(String mode, String topology, String extra, int spread, String expected) {
        BsonDocument pref = BsonDocument.parse(extra).append("mode", new org.bson.BsonString(mode));
        var chosen = MemberSelector.select(topology(topology), ReadPreference.parse(pref), null, m -> 0, spread);
        assertThat(chosen.map(s -> s.member().getHost()).orElse("none")).isEqualTo(expected);
    }
}
