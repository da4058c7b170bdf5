package io.thermocline.proxy.causal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;

class PassThroughCausalPointTest {
    private static final BsonTimestamp EARLIER = new BsonTimestamp(100, 1);
    private static final BsonTimestamp LATER = new BsonTimestamp(100, 7);

    private static BsonDocument find(BsonTimestamp after) {
        BsonDocument readConcern = new BsonDocument("level", new BsonString("majority"));
        if (after != null) {
            readConcern.append("afterClusterTime", after);
        }
        return new BsonDocument("find", new BsonString("customers")).append("readConcern", readConcern);
    }

    @Test
    void aPointTheTierHasReachedIsKept() {
        assertThat(PassThroughCausalPoint.aheadOf(find(EARLIER), LATER)).isFalse();
        assertThat(PassThroughCausalPoint.aheadOf(find(LATER), LATER)).isFalse();
        assertThat(PassThroughCausalPoint.readConcernFor(find(EARLIER), LATER)).isEmpty();
    }

    @Test
    void aCommandWithoutAPointIsKept() {
        assertThat(PassThroughCausalPoint.aheadOf(find(null), LATER)).isFalse();
        assertThat(PassThroughCausalPoint.aheadOf(new BsonDocument("find", new BsonString("c")), null)).isFalse();
        assertThat(PassThroughCausalPoint.readConcernFor(find(null), null)).isEmpty();
    }

    @Test
    void aPointBeyondTheTiersClockIsReplacedByTheTiersPresentKeepingTheLevel() {
        assertThat(PassThroughCausalPoint.aheadOf(find(LATER), EARLIER)).isTrue();
        assertThat(PassThroughCausalPoint.readConcernFor(find(LATER), EARLIER)).contains(
                new BsonDocument("level", new BsonString("majority")).append("afterClusterTime", EARLIER));
    }

    @Test
    void withoutAnyTimeOfTheTierThePointIsDropped() {
        assertThat(PassThroughCausalPoint.aheadOf(find(LATER), null)).isTrue();
        assertThat(PassThroughCausalPoint.readConcernFor(find(LATER), null)).contains(
                new BsonDocument("level", new BsonString("majority")));
    }

    @Test
    void timeOfReadsAClusterTimeDocument() {
        assertThat(PassThroughCausalPoint.timeOf(Optional.of(new BsonDocument("clusterTime", LATER)))).isEqualTo(LATER);
        assertThat(PassThroughCausalPoint.timeOf(Optional.empty())).isNull();
    }
}
