package io.thermocline.tiering.provenance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.reactivestreams.client.ClientSession;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.reactive.Blocking;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A copy-up's claim on fences: leaves what it found, and makes a concurrent deletion of the same document conflict. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FenceClaimTest extends OnTwoTiers {

    @Test
    void aClaimLeavesNoFenceWhereNoneWasAndKeepsAnExistingOne() {
        BsonValue fenced = new BsonInt32(1);
        BsonValue never = new BsonInt32(2);
        ClientSession eviction = tiers.beginFastTransaction();
        Fence before = tiers.fences.write(eviction, TwoTiers.NS, fenced, Fence.Kind.EVICTION);
        Blocking.run(eviction.commitTransaction());

        ClientSession copy = tiers.beginFastTransaction();
        tiers.fences.claim(copy, TwoTiers.NS, List.of(fenced, never));
        assertThat(tiers.fences.read(copy, TwoTiers.NS, List.of(fenced, never)))
                .as("inside the claiming transaction")
                .containsOnlyKeys(fenced);
        Blocking.run(copy.commitTransaction());

        Map<BsonValue, Fence> after = tiers.fences.read(null, TwoTiers.NS, List.of(fenced, never));
        assertThat(after).containsOnlyKeys(fenced);
        assertThat(after.get(fenced).kind()).isEqualTo(Fence.Kind.EVICTION);
        assertThat(after.get(fenced).deleteId()).isEqualTo(before.deleteId());
    }

    @Test
    void aDeletionOfAClaimedDocumentConflictsWithTheClaim() {
        for (BsonValue id : List.of(new BsonInt32(3), new BsonInt32(4))) {
            if (id.asInt32().getValue() == 4) {
                ClientSession eviction = tiers.beginFastTransaction();
                tiers.fences.write(
                        eviction, TwoTiers.NS, id, Fence.Kind.EVICTION); // a claim over an existing fence too
                Blocking.run(eviction.commitTransaction());
            }
            ClientSession copy = tiers.beginFastTransaction();
            tiers.fences.claim(copy, TwoTiers.NS, List.of(id));
            ClientSession delete = tiers.beginFastTransaction();
            MongoException conflict = catchThrowableOfType(
                    MongoException.class, () -> tiers.fences.write(delete, TwoTiers.NS, id, Fence.Kind.USER_DELETE));
            assertThat(conflict).as("the user delete of %s meets the claim", id).isNotNull();
            assertThat(conflict.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL))
                    .isTrue();
            Blocking.run(delete.abortTransaction());
            Blocking.run(copy.commitTransaction());
        }
    }

    @Test
    void aLeftoverClaimReadsAsNoFenceAndAFenceOfAnUnknownKindFailsClosedNamingIt() {
        var stored = tiers.store.collection(io.thermocline.tiering.metadata.MetadataStore.FENCES);
        BsonValue claimed = new BsonInt32(5);
        BsonValue future = new BsonInt32(6);
        Blocking.run(stored.insertOne(new org.bson.BsonDocument("_id", Fence.key(TwoTiers.NS, claimed))
                .append("claim", new org.bson.BsonObjectId())
                .append("kind", new org.bson.BsonString("CLAIM"))));
        assertThat(tiers.fences.read(null, TwoTiers.NS, List.of(claimed)))
                .as("a committed claim placeholder")
                .isEmpty();
        assertThat(tiers.fences.evictedVersions(null, TwoTiers.NS, List.of(claimed)))
                .isEmpty();

        Blocking.run(stored.insertOne(new org.bson.BsonDocument("_id", Fence.key(TwoTiers.NS, future))
                .append("kind", new org.bson.BsonString("ARCHIVED"))
                .append("deleteId", new org.bson.BsonObjectId())
                .append("at", new org.bson.BsonDateTime(0))));
        Fence.UnreadableFence unreadable = catchThrowableOfType(
                Fence.UnreadableFence.class, () -> tiers.fences.read(null, TwoTiers.NS, List.of(claimed, future)));
        assertThat(unreadable)
                .as("a fence of a kind this version does not know")
                .isNotNull();
        assertThat(unreadable.getMessage()).contains("'ARCHIVED'", "\"id\": 6", "refused");
    }
}
