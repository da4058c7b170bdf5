package io.thermocline.proxy.history;

import io.thermocline.proxy.history.HistoryChecker.Mode;
import io.thermocline.proxy.tiered.TierPair;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.testcontainers.containers.MongoDBContainer;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;

/**
 * The history checker on real MongoDB: a mongo:7 replica set as the fast tier and another as the
 * archive (Testcontainers). Skipped where no Docker engine runs; {@code mvn verify -Pe2e}. Without
 * Docker, the same runs on any two replica sets with {@code -Dthermocline.tiers=external}.
 */
@Tag("e2e")
@Testcontainers(disabledWithoutDocker = true)
class ConcurrentHistoryE2ETest {

    private static MongoDBContainer fast;
    private static MongoDBContainer archive;

    @BeforeAll
    static void start() {
        fast = new MongoDBContainer(DockerImageName.parse("mongo:7"));
        archive = new MongoDBContainer(DockerImageName.parse("mongo:7"));
        fast.start();
        archive.start();
    }

    @AfterAll
    static void stop() {
        if (fast != null) {
            fast.stop();
        }
        if (archive != null) {
            archive.stop();
        }
    }

    private static TierPair realTiers() {
        return TierPair.external(uri(fast), uri(archive));
    }

    private static String uri(MongoDBContainer container) {
        return container.getReplicaSetUrl("test").replace("/test", "/?directConnection=true");
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("io.thermocline.proxy.history.ConcurrentHistoryTest#seeds")
    void sessionGuaranteesHoldOnRealReplicaSets(long seed) throws Exception {
        ConcurrentHistoryTest.assertNoAnomaly("history.seeds", seed, Mode.SESSION,
                ConcurrentHistoryTest.run(seed, "session", Mode.SESSION, ConcurrentHistoryE2ETest::realTiers));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("io.thermocline.proxy.history.ConcurrentHistoryTest#seeds")
    void linearizableReadsHoldOnRealReplicaSets(long seed) throws Exception {
        ConcurrentHistoryTest.assertNoAnomaly("history.seeds", seed, Mode.LINEARIZABLE,
                ConcurrentHistoryTest.run(seed, "linearizable", Mode.LINEARIZABLE, ConcurrentHistoryE2ETest::realTiers));
    }
}
