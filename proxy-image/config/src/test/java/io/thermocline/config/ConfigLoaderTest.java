package io.thermocline.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

    private static final String TIERED = """
            tiers:
              fast: {uri: "mongodb://fast-0:27017/?replicaSet=fast", connectionBudget: 40}
              archive: {uri: "mongodb://a:27017,b:27017/?replicaSet=rs0"}
            fleet: {replicas: 3, instanceId: proxy-1}
            collections:
              - {database: shop, collection: orders, ageField: createdAt, hotWindow: 30d}
              - {database: shop, collection: events, ageField: _id, hotWindow: 12h}
            """;

    @Test
    void minimalPassThroughConfigGetsDefaults() {
        ThermoclineConfig c =
                ConfigLoader.parse("tiers: {archive: {uri: 'mongodb://localhost:27018'}}", Map.of("HOSTNAME", "pod-7"));
        assertThat(c.tiers().tiered()).isFalse();
        assertThat(c.tiers().archive().connectionBudget()).isEqualTo(TierConfig.DEFAULT_CONNECTION_BUDGET);
        assertThat(c.proxy().port()).isEqualTo(27017);
        assertThat(c.proxy().maxMessageSizeBytes()).isEqualTo(48_000_000);
        assertThat(c.fleet().instanceId()).isEqualTo("pod-7");
        assertThat(c.evictor().interval()).isEqualTo(Duration.ofMinutes(1));
    }

    @Test
    void messageBufferBudgetsDeriveFromTheMessageSizeUnlessSet() {
        ThermoclineConfig derived = ConfigLoader.parse(
                "proxy: {maxMessageSizeBytes: 16000000}\ntiers: {archive: {uri: 'mongodb://a'}}", Map.of());
        assertThat(derived.proxy().bufferedBytesPerConnectionLimit()).isEqualTo(32_000_000L);
        assertThat(derived.proxy().bufferedBytesLimit()).isEqualTo(64_000_000L);
        ThermoclineConfig set = ConfigLoader.parse(
                "proxy: {maxBufferedBytesPerConnection: 50000000}\ntiers: {archive: {uri: 'mongodb://a'}}",
                Map.of("THERMOCLINE_PROXY_MAX_BUFFERED_BYTES", "3000000000"));
        assertThat(set.proxy().bufferedBytesPerConnectionLimit()).isEqualTo(50_000_000L);
        assertThat(set.proxy().bufferedBytesLimit()).isEqualTo(3_000_000_000L);
    }

    @Test
    void messageBufferBudgetsMustHoldOneMessageAndOneConnection() {
        assertThatThrownBy(() -> ConfigLoader.parse(
                        "proxy: {maxBufferedBytesPerConnection: 1000000, maxBufferedBytes: 40000000}\n"
                                + "tiers: {archive: {uri: 'mongodb://a'}}",
                        Map.of()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining(
                        "proxy.maxBufferedBytesPerConnection: 1000000 is less than proxy.maxMessageSizeBytes (48000000)")
                .hasMessageNotContaining("proxy.maxBufferedBytes:");
        assertThatThrownBy(() -> ConfigLoader.parse(
                        "proxy: {maxBufferedBytes: 90000000}\ntiers: {archive: {uri: 'mongodb://a'}}", Map.of()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining(
                        "proxy.maxBufferedBytes: 90000000 is less than one connection's budget (96000000");
    }

    @Test
    void fleetPeersComeFromAListOrTheServiceAndNeedTheSecretFile() {
        ThermoclineConfig listed = ConfigLoader.parse(
                "tiers: {archive: {uri: 'mongodb://localhost:27018'}}\n"
                        + "fleet: {peers: ['proxy-0.peers:27018', '10.0.0.7:27018'], secretFile: /etc/thermocline/peer-secret}",
                Map.of());
        assertThat(listed.fleet().hasPeers()).isTrue();
        ThermoclineConfig fromEnv = ConfigLoader.parse(
                "tiers: {archive: {uri: 'mongodb://localhost:27018'}}",
                Map.of("THERMOCLINE_FLEET_PEER_SERVICE", "proxy-peers.ns.svc", "THERMOCLINE_FLEET_SECRET_FILE", "/s"));
        assertThat(fromEnv.fleet().hasPeers()).isTrue();
        // Named peers without the secret: the replicas run unlinked (the proxy warns), as before the fleet.
        ThermoclineConfig noSecret = ConfigLoader.parse(
                "tiers: {archive: {uri: 'mongodb://localhost:27018'}}\n" + "fleet: {peerService: proxy-peers.ns.svc}",
                Map.of());
        assertThat(noSecret.fleet().namesPeers()).isTrue();
        assertThat(noSecret.fleet().hasPeers()).isFalse();
        assertThatThrownBy(() -> ConfigLoader.parse(
                        "tiers: {archive: {uri: 'mongodb://localhost:27018'}}\n"
                                + "fleet: {peers: ['no-port'], secretFile: ' '}",
                        Map.of()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("fleet.peers[0]: 'no-port' is not host:port")
                .hasMessageContaining("fleet.secretFile: empty");
    }

    @Test
    void tieredConfigParsesPoliciesAndWindows() {
        ThermoclineConfig c = ConfigLoader.parse(TIERED, Map.of());
        assertThat(c.collections())
                .extracting(CollectionPolicy::namespace)
                .containsExactly("shop.orders", "shop.events");
        assertThat(c.collections().get(0).hotWindow()).isEqualTo(Duration.ofDays(30));
        assertThat(c.collections().get(1).agedByObjectId()).isTrue();
        assertThat(c.policyFor("shop.orders")).isPresent();
        assertThat(c.policyFor("shop.other")).isEmpty();
        assertThat(c.fleet().poolSize(c.tiers().fast())).isEqualTo(14);
    }

    @Test
    void environmentOverridesFileValues() {
        ThermoclineConfig c = ConfigLoader.parse(
                TIERED,
                Map.of(
                        "THERMOCLINE_TIERS_ARCHIVE_URI", "mongodb://override:1/?replicaSet=x",
                        "THERMOCLINE_PROXY_MAX_CLIENT_CONNECTIONS", "77",
                        "THERMOCLINE_PROXY_COMPRESSORS", "zstd, zlib",
                        "THERMOCLINE_FEEDER_COALESCE", "false",
                        "THERMOCLINE_PROXY_TRANSPORT", "epoll",
                        "THERMOCLINE_MONGOSH", "/not/a/setting"));
        assertThat(c.tiers().archive().uri()).isEqualTo("mongodb://override:1/?replicaSet=x");
        assertThat(c.proxy().maxClientConnections()).isEqualTo(77);
        assertThat(c.proxy().compressors()).containsExactly("zstd", "zlib");
        assertThat(c.feeder().coalesce()).isFalse();
        assertThat(c.proxy().transport()).isEqualTo("epoll");
    }

    @Test
    void environmentAloneCanConfigureThePassThroughProxy() {
        ThermoclineConfig c = ConfigLoader.fromEnvironment(Map.of("THERMOCLINE_TIERS_ARCHIVE_URI", "mongodb://h:1"));
        assertThat(c.tiers().archive().uri()).isEqualTo("mongodb://h:1");
    }

    @Test
    void misspelledEnvironmentOverrideIsRejectedWithTheSettableNames() {
        assertThatThrownBy(() -> ConfigLoader.parse(TIERED, Map.of("THERMOCLINE_PROXY_PROT", "1")))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("THERMOCLINE_PROXY_PROT: no such setting")
                .hasMessageContaining("did you mean THERMOCLINE_PROXY_PORT?");
    }

    @Test
    void everyProblemIsReportedWithItsFieldPath() {
        String bad = """
                proxy: {port: 70000, compressors: [lz4], maxClientConnections: 0, transport: dpdk}
                tiers: {archive: {uri: "http://x"}}
                collections:
                  - {database: shop, collection: orders, ageField: "$bad", hotWindow: 0s}
                """;
        assertThatThrownBy(() -> ConfigLoader.parse(bad, Map.of()))
                .isInstanceOfSatisfying(
                        InvalidConfigException.class,
                        e -> assertThat(e.problems())
                                .anySatisfy(m -> assertThat(m).startsWith("proxy.port: 70000"))
                                .anySatisfy(m -> assertThat(m).startsWith("proxy.compressors: 'lz4'"))
                                .anySatisfy(m -> assertThat(m).startsWith("proxy.maxClientConnections"))
                                .anySatisfy(
                                        m -> assertThat(m)
                                                .startsWith(
                                                        "proxy.transport: 'dpdk' is not a transport; use one of auto, io_uring"))
                                .anySatisfy(m -> assertThat(m).startsWith("tiers.archive.uri: 'http://x'"))
                                .anySatisfy(m -> assertThat(m).startsWith("collections[0].ageField"))
                                .anySatisfy(m -> assertThat(m).startsWith("collections[0].hotWindow"))
                                .anySatisfy(m -> assertThat(m).startsWith("tiers.fast.uri: collections are tiered")));
    }

    @Test
    void readConsistencyIsLinearizableUnlessSessionIsChosen() {
        assertThat(ConfigLoader.parse(TIERED, Map.of()).proxy().readConsistency())
                .isEqualTo(ReadConsistency.LINEARIZABLE);
        assertThat(ConfigLoader.parse(TIERED + "proxy: {readConsistency: session}", Map.of())
                        .proxy()
                        .readConsistency())
                .isEqualTo(ReadConsistency.SESSION);
        assertThat(ConfigLoader.parse(TIERED, Map.of("THERMOCLINE_PROXY_READ_CONSISTENCY", "session"))
                        .proxy()
                        .readConsistency())
                .isEqualTo(ReadConsistency.SESSION);
    }

    @Test
    void unknownReadConsistencyNamesTheFieldAndTheChoices() {
        assertThatThrownBy(() -> ConfigLoader.parse(TIERED + "proxy: {readConsistency: eventual}", Map.of()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("proxy.readConsistency")
                .hasMessageContaining("'eventual' is not a read consistency; use linearizable");
    }

    @Test
    void secondaryReadsArePrimaryUnlessACollectionOffloadsThem() {
        ThermoclineConfig c = ConfigLoader.parse(
                TIERED.replace("hotWindow: 12h}", "hotWindow: 12h, secondaryReads: offload}"), Map.of());
        assertThat(c.collections())
                .extracting(CollectionPolicy::secondaryReads)
                .containsExactly(SecondaryReads.PRIMARY, SecondaryReads.OFFLOAD);
    }

    @Test
    void unknownSecondaryReadsPolicyNamesTheFieldAndTheChoices() {
        assertThatThrownBy(() -> ConfigLoader.parse(
                        TIERED.replace("hotWindow: 12h}", "hotWindow: 12h, secondaryReads: always}"), Map.of()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("secondaryReads")
                .hasMessageContaining("'always' is not a secondaryReads policy; use primary");
    }

    @Test
    void unknownFieldIsNamed() {
        assertThatThrownBy(() -> ConfigLoader.parse("tiers: {archive: {uri: 'mongodb://h', budget: 3}}", Map.of()))
                .isInstanceOf(InvalidConfigException.class)
                .hasMessageContaining("tiers.archive.budget");
    }

    @Test
    void everyTypeErrorIsReportedInOneRunWithoutJavaNames() {
        String bad = TIERED + """
                proxy: {port: abc, maxClientConnections: [1], prot: 3}
                feeder: {coalesce: maybe}
                evictor: {interval: soon}
                """;
        assertThatThrownBy(() -> ConfigLoader.parse(bad, Map.of()))
                .isInstanceOfSatisfying(InvalidConfigException.class, e -> {
                    assertThat(e.problems())
                            .anySatisfy(m -> assertThat(m).startsWith("proxy.port: 'abc' is not a whole number"))
                            .anySatisfy(m -> assertThat(m)
                                    .startsWith("proxy.maxClientConnections: a list is not a whole number"))
                            .anySatisfy(m -> assertThat(m).startsWith("proxy.prot: no such field; did you mean port?"))
                            .anySatisfy(m -> assertThat(m).startsWith("feeder.coalesce: 'maybe' is not true or false"))
                            .anySatisfy(m -> assertThat(m).startsWith("evictor.interval"));
                    assertThat(String.join("\n", e.problems()))
                            .doesNotContain("java.", "`", "Integer", "Boolean", "Duration");
                });
    }

    @Test
    void unknownFieldSuggestsTheNearestKnownOne() {
        assertThatThrownBy(() ->
                        ConfigLoader.parse("tiers: {archive: {uri: 'mongodb://h', connectionBudgett: 3}}", Map.of()))
                .hasMessageContaining("tiers.archive.connectionBudgett: no such field; did you mean connectionBudget?");
    }

    @Test
    void badDurationSaysHowToWriteOne() {
        assertThatThrownBy(() -> ConfigLoader.parse(TIERED + "evictor: {interval: soon}", Map.of()))
                .hasMessageContaining("evictor.interval")
                .hasMessageContaining("30d");
    }

    @Test
    void missingArchiveIsReported() {
        assertThatThrownBy(() -> ConfigLoader.parse("", Map.of())).hasMessageContaining("tiers.archive.uri: missing");
    }

    @Test
    void credentialsAreNotEchoedInErrors() {
        assertThatThrownBy(() -> ConfigLoader.parse("tiers: {archive: {uri: 'mongo://user:secret@h'}}", Map.of()))
                .hasMessageNotContaining("secret");
    }

    @Test
    void duplicatePoliciesAreRejected() {
        String twice = TIERED + "  - {database: shop, collection: orders, ageField: at, hotWindow: 1d}\n";
        assertThatThrownBy(() -> ConfigLoader.parse(twice, Map.of()))
                .hasMessageContaining("collections[2]: shop.orders has a policy already");
    }

    @Test
    void invalidYamlReportsTheLine() {
        assertThatThrownBy(() -> ConfigLoader.parse("tiers:\n  archive: [unclosed", Map.of()))
                .hasMessageContaining("not valid YAML or JSON")
                .hasMessageContaining("line");
    }

    @Test
    void missingFileIsReported(@TempDir Path dir) {
        assertThatThrownBy(() -> ConfigLoader.load(dir.resolve("nope.yaml"), Map.of()))
                .hasMessageContaining("does not exist");
    }

    @Test
    void renderedConfigLoadsBackUnchanged(@TempDir Path dir) throws Exception {
        ThermoclineConfig original = ConfigLoader.parse(TIERED, Map.of());
        Path file = dir.resolve("thermocline.yaml");
        Files.writeString(file, ConfigWriter.toYaml(original));
        assertThat(ConfigLoader.load(file, Map.of())).isEqualTo(original);
        assertThat(Files.readString(file)).contains("hotWindow: 30d").contains("hotWindow: 12h");
    }

    @Test
    void jsonIsAcceptedToo() {
        ThermoclineConfig c = ConfigLoader.parse(
                "{\"tiers\": {\"archive\": {\"uri\": \"mongodb://j:1\"}}, \"proxy\": {\"port\": 0}}", Map.of());
        assertThat(c.proxy().port()).isZero();
        assertThat(c.proxy().compressors()).isEqualTo(List.of("zstd", "snappy", "zlib"));
        assertThat(c.proxy().transport()).isEqualTo("auto");
    }
}
