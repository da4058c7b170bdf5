package io.thermocline.tiering.provenance;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which evicted versions the feeder (or a resync) may put in the archive: only an eviction's own, and never one from before a drop. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EvictedVersionsTest extends OnTwoTiers {

    private static BsonDocument version(int id, String state) {
        return new BsonDocument("_id", new BsonInt32(id)).append("state", new BsonString(state));
    }

    @Test
    void onlyEvictionFencesGiveTheirVersion() {
        tiers.inFastTransaction(s -> {
            tiers.fences.writeEviction(s, TwoTiers.NS, version(1, "evicted"));
            tiers.fences.write(s, TwoTiers.NS, new BsonInt32(2), Fence.Kind.USER_DELETE);
            tiers.fences.write(s, TwoTiers.NS, new BsonInt32(3), Fence.Kind.EVICTION); // too large to carry it
        });
        List<BsonValue> ids = List.of(new BsonInt32(1), new BsonInt32(2), new BsonInt32(3), new BsonInt32(4));
        assertThat(tiers.fences.evictedVersions(null, TwoTiers.NS, ids))
                .containsOnlyKeys(new BsonInt32(1))
                .containsValue(version(1, "evicted"));
        assertThat(tiers.fences
                        .read(null, TwoTiers.NS, ids)
                        .get(new BsonInt32(1))
                        .kind())
                .as("still an eviction fence to the proxy")
                .isEqualTo(Fence.Kind.EVICTION);

        tiers.inFastTransaction(s -> tiers.fences.write(s, TwoTiers.NS, new BsonInt32(1), Fence.Kind.USER_DELETE));
        assertThat(tiers.fences.evictedVersions(null, TwoTiers.NS, ids))
                .as("deleted by the user since its eviction")
                .isEmpty();
    }

    @Test
    void noVersionFromBeforeADropNorDuringOne() throws Exception {
        List<BsonValue> ids = List.of(new BsonInt32(1), new BsonInt32(2));
        tiers.inFastTransaction(s -> tiers.fences.writeEviction(s, TwoTiers.NS, version(1, "before the drop")));
        Thread.sleep(5);
        tiers.fences.writeDrop(TwoTiers.NS, Fence.Kind.DROP_STARTED);
        assertThat(tiers.fences.evictedVersions(null, TwoTiers.NS, ids))
                .as("during the drop")
                .isEmpty();
        Thread.sleep(5);
        tiers.fences.writeDrop(TwoTiers.NS, Fence.Kind.DROPPED);
        assertThat(tiers.fences.evictedVersions(null, TwoTiers.NS, ids))
                .as("after the drop")
                .isEmpty();
        Thread.sleep(5);
        tiers.inFastTransaction(s -> tiers.fences.writeEviction(s, TwoTiers.NS, version(2, "after the drop")));
        assertThat(tiers.fences.evictedVersions(null, TwoTiers.NS, ids))
                .as("evicted from the new collection")
                .containsOnlyKeys(new BsonInt32(2));
    }
}
