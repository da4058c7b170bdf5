package io.thermocline.tiering.provenance;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ReadConcern;
import com.mongodb.TransactionOptions;
import com.mongodb.WriteConcern;
import com.mongodb.reactivestreams.client.ClientSession;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.reactive.Blocking;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which evicted versions the feeder (or a resync) may put in the archive: only an eviction's own, and never one from before a drop. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EvictedVersionsTest {

    TwoTiers tiers;
    Fences fences;

    @BeforeEach
    void start() {
        tiers = new TwoTiers();
        fences = new Fences(tiers.store);
    }

    @AfterEach
    void stop() {
        tiers.close();
    }

    private void inTransaction(Consumer<ClientSession> writes) {
        ClientSession session = Blocking.single(tiers.fast.startSession()).orElseThrow();
        session.startTransaction(TransactionOptions.builder().readConcern(ReadConcern.LOCAL).writeConcern(WriteConcern.MAJORITY).build());
        writes.accept(session);
        Blocking.run(session.commitTransaction());
        session.close();
    }

    private static BsonDocument version(int id, String state) {
        return new BsonDocument("_id", new BsonInt32(id)).append("state", new BsonString(state));
    }

    @Test
    void onlyEvictionFencesGiveTheirVersion() {
        inTransaction(s -> {
            fences.writeEviction(s, TwoTiers.NS, version(1, "evicted"));
            fences.write(s, TwoTiers.NS, new BsonInt32(2), Fence.Kind.USER_DELETE);
            fences.write(s, TwoTiers.NS, new BsonInt32(3), Fence.Kind.EVICTION); // too large to carry it
        });
        List<BsonValue> ids = List.of(new BsonInt32(1), new BsonInt32(2), new BsonInt32(3), new BsonInt32(4));
        assertThat(fences.evictedVersions(null, TwoTiers.NS, ids)).containsOnlyKeys(new BsonInt32(1))
                .containsValue(version(1, "evicted"));
        assertThat(fences.read(null, TwoTiers.NS, ids).get(new BsonInt32(1)).kind()).as("still an eviction fence to the proxy")
                .isEqualTo(Fence.Kind.EVICTION);

        inTransaction(s -> fences.write(s, TwoTiers.NS, new BsonInt32(1), Fence.Kind.USER_DELETE));
        assertThat(fences.evictedVersions(null, TwoTiers.NS, ids)).as("deleted by the user since its eviction").isEmpty();
    }

    @Test
    void noVersionFromBeforeADropNorDuringOne() throws Exception {
        List<BsonValue> ids = List.of(new BsonInt32(1), new BsonInt32(2));
        inTransaction(s -> fences.writeEviction(s, TwoTiers.NS, version(1, "before the drop")));
        Thread.sleep(5);
        fences.writeDrop(TwoTiers.NS, Fence.Kind.DROP_STARTED);
        assertThat(fences.evictedVersions(null, TwoTiers.NS, ids)).as("during the drop").isEmpty();
        Thread.sleep(5);
        fences.writeDrop(TwoTiers.NS, Fence.Kind.DROPPED);
        assertThat(fences.evictedVersions(null, TwoTiers.NS, ids)).as("after the drop").isEmpty();
        Thread.sleep(5);
        inTransaction(s -> fences.writeEviction(s, TwoTiers.NS, version(2, "after the drop")));
        assertThat(fences.evictedVersions(null, TwoTiers.NS, ids)).as("evicted from the new collection").containsOnlyKeys(new BsonInt32(2));
    }
}
