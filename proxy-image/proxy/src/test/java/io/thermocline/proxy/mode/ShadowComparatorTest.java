package io.thermocline.proxy.mode;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.ShadowConfig;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.config.Mode;
import io.thermocline.tiering.mode.FollowerState;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.mode.ShadowEvidence;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.worker.TierClients;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which comparisons count while the follower keeps applying archive changes (a write mix): an agreement
 * is always evidence (the fast tier returned exactly the archive's answer); a difference is a divergence
 * only when no later change of the namespace had begun, else it is skipped (the fast tier may be ahead).
 */
@Timeout(30)
class ShadowComparatorTest {

    static final String NS = "shop.orders";
    static final BsonTimestamp READ_AT = new BsonTimestamp(1_700_000_000, 5);
    static final BsonTimestamp LATER = new BsonTimestamp(1_700_000_000, 9);

    EmbeddedReplicaSet fastTier;
    MongoClient fast;
    ModeStore modes;
    ShadowComparator comparator;
    /** The namespace's coverage as the proxy routes by it. */
    volatile CoverageBound coverage = CoverageBound.from(Instant.parse("2026-11-01T00:00:00Z"));

    @BeforeEach
    void start() {
        fastTier = EmbeddedReplicaSet.builder().name("fast").build().start();
        fast = TierClients.client(fastTier.connectionString(), "shadow-comparator-test");
        MetadataStore store = new MetadataStore(fast);
        store.ensureCollections();
        modes = new ModeStore(store);
        Blocking.run(fast.getDatabase("shop").getCollection("orders", BsonDocument.class).insertOne(order(1, 5)));
        comparator = new ShadowComparator(fast, modes, ns -> coverage, "proxy-1", ShadowConfig.defaults(), Clock.systemUTC(), Duration.ofMillis(100));
    }

    @AfterEach
    void stop() {
        comparator.close();
        fast.close();
        fastTier.close();
    }

    @Test
    void anAgreementCountsEvenWhenALaterChangeOfTheNamespaceHadBegun() throws Exception {
        followerAt(LATER, LATER);
        comparator.compare(sample(order(1, 5)));
        assertThat(evidence()).extracting(ShadowEvidence::compared, ShadowEvidence::agreed, ShadowEvidence::skipped).containsExactly(1L, 1L, 0L);
    }

    @Test
    void aDifferenceAfterALaterChangeBeganIsSkippedNotBlamed() throws Exception {
        followerAt(LATER, LATER);
        comparator.compare(sample(order(1, 4)));
        assertThat(evidence()).extracting(ShadowEvidence::compared, ShadowEvidence::diverged, ShadowEvidence::skipped).containsExactly(0L, 0L, 1L);
    }

    @Test
    void aDifferenceWithNoLaterChangeIsADivergence() throws Exception {
        followerAt(LATER, READ_AT);
        comparator.compare(sample(order(1, 4)));
        assertThat(evidence()).extracting(ShadowEvidence::compared, ShadowEvidence::diverged, ShadowEvidence::skipped).containsExactly(1L, 1L, 0L);
    }

    /**
     * ShadowHistoryTest saw a false divergence: a read sampled while shadowing, compared once the cutover had made
     * the fleet tiered, when writes reach the fast tier directly and no follower announcement covers them.
     */
    @Test
    void aDifferenceFoundAfterTheFleetLeftTheSamplesPhaseIsSkipped() throws Exception {
        followerAt(LATER, READ_AT);
        ShadowComparator.Sample sampled = sample(order(1, 4));
        ModeDocument shadowing = modes.read();
        modes.save(shadowing, shadowing.entering(Mode.TIERED, Phase.TIERED, Instant.now()));
        comparator.compare(sampled);
        assertThat(evidence()).extracting(ShadowEvidence::compared, ShadowEvidence::diverged, ShadowEvidence::skipped).containsExactly(0L, 0L, 1L);
        // an agreement still counts, whatever the phase
        comparator.compare(sample(order(1, 5)));
        assertThat(evidence()).extracting(ShadowEvidence::compared, ShadowEvidence::agreed).containsExactly(1L, 1L);
    }

    /**
     * ShadowHistoryTest seed 19: the evictor raised the bound and removed a document of the archive's answer meanwhile.
     * That explains a document missing from the fast tier's answer, never a changed field.
     */
    @Test
    void aDocumentMissingAfterTheCoverageMovedIsSkippedAChangedFieldIsNot() throws Exception {
        followerAt(LATER, READ_AT);
        // the archive's answer held a document the fast tier's lacks
        ShadowComparator.Sample missing = sample(order(1, 5), order(2, 1));
        ShadowComparator.Sample changed = sample(order(1, 4));
        coverage = CoverageBound.from(Instant.parse("2026-11-02T00:00:00Z"));
        comparator.compare(missing);
        assertThat(evidence()).extracting(ShadowEvidence::compared, ShadowEvidence::diverged, ShadowEvidence::skipped).containsExactly(0L, 0L, 1L);
        comparator.compare(changed);
        assertThat(evidence()).as("a changed field: a divergence").extracting(ShadowEvidence::diverged).isEqualTo(1L);
        comparator.compare(sample(order(1, 5), order(2, 1)));
        assertThat(evidence()).as("the same coverage: a divergence").extracting(ShadowEvidence::diverged).isEqualTo(2L);
    }

    @Test
    void aReadTheFollowerHasNotAppliedYetIsSkipped() throws Exception {
        followerAt(new BsonTimestamp(1_700_000_000, 1), new BsonTimestamp(1_700_000_000, 1));
        comparator.compare(sample(order(1, 5)));
        assertThat(evidence()).extracting(ShadowEvidence::compared, ShadowEvidence::skipped).containsExactly(0L, 1L);
    }

    private void followerAt(BsonTimestamp appliedThrough, BsonTimestamp changing) {
        FollowerState held = modes.takeFollowerLease("follower", Duration.ofMinutes(1), Instant.now()).orElseThrow();
        modes.saveFollower(null, held.lease(), held.restartedAt(new BsonTimestamp(1_700_000_000, 0))
                .applied(null, appliedThrough).withChanging(Map.of(NS, changing)));
    }

    private ShadowEvidence evidence() {
        return comparator.evidence().get(NS);
    }

    private static BsonDocument order(int id, int qty) {
        return new BsonDocument("_id", new BsonInt32(id)).append("qty", new BsonInt32(qty));
    }

    /** A point read and the archive's complete answer to it, read at {@link #READ_AT}. */
    private ShadowComparator.Sample sample(BsonDocument... archived) {
        BsonDocument command = new BsonDocument("find", new BsonString("orders")).append("filter", new BsonDocument("_id", new BsonInt32(1)));
        BsonDocument reply = new BsonDocument("cursor", new BsonDocument("id", new BsonInt64(0)).append("ns", new BsonString(NS))
                .append("firstBatch", new BsonArray(List.of(archived)))).append("ok", new org.bson.BsonDouble(1)).append("operationTime", READ_AT);
        return new ShadowComparator.Sample(NS, "find orders {_id}", "shop", command, new RawBsonDocument(reply, new BsonDocumentCodec()),
                modes.read().epoch(), coverage);
    }
}
