package io.thermocline.proxy.tiered.writes;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.tiered.writes.UniqueKeys.UniqueIndex;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which unique indexes count, which documents hold a written key, and which updates may change one. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class UniqueKeysTest {

    static BsonDocument d(String json) {
        return BsonDocument.parse(json);
    }

    static final UniqueIndex SKU = UniqueIndex.of(d("{v: 2, key: {sku: 1}, name: 'sku_1', unique: true}")).orElseThrow();
    static final UniqueIndex STORE_CODE = UniqueIndex.of(d("{v: 2, key: {store: 1, 'code.n': -1}, name: 'sc', unique: true, sparse: true}"))
            .orElseThrow();
    static final UniqueIndex PAID = UniqueIndex.of(d("{v: 2, key: {ref: 1}, name: 'ref_paid', unique: true,"
            + " partialFilterExpression: {paid: true}}")).orElseThrow();

    @Test
    void onlyUniqueSecondaryIndexesCount() {
        assertThat(UniqueIndex.of(d("{v: 2, key: {_id: 1}, name: '_id_'}"))).isEmpty();
        assertThat(UniqueIndex.of(d("{v: 2, key: {_id: 1}, name: '_id_', unique: true}"))).isEmpty();
        assertThat(UniqueIndex.of(d("{v: 2, key: {state: 1}, name: 'state_1'}"))).isEmpty();
        assertThat(UniqueIndex.of(d("{v: 2, key: {state: 1}, name: 'state_1', unique: false}"))).isEmpty();
        assertThat(SKU.name()).isEqualTo("sku_1");
        assertThat(STORE_CODE.sparse()).isTrue();
        assertThat(PAID.partialFilter()).isEqualTo(d("{paid: true}"));
    }

    @Test
    void holdersAreOtherDocumentsWithTheSameKey() {
        assertThat(UniqueKeys.holders(List.of(SKU), List.of(d("{_id: 1, sku: 'a'}"))))
                .contains(d("{$and: [{_id: {$nin: [1]}}, {sku: {$eq: 'a'}}]}"));
        // a missing field is null in a non-sparse index; an array holds each element
        assertThat(UniqueKeys.holders(List.of(SKU), List.of(d("{_id: 1}")))).contains(d("{$and: [{_id: {$nin: [1]}}, {sku: {$eq: null}}]}"));
        assertThat(UniqueKeys.holders(List.of(SKU), List.of(d("{_id: 1, sku: ['a', 'b']}"))))
                .contains(d("{$and: [{_id: {$nin: [1]}}, {sku: {$in: ['a', 'b']}}]}"));
        // a compound key on a dotted path; a sparse index leaves out a document without any of its fields
        assertThat(UniqueKeys.holders(List.of(STORE_CODE), List.of(d("{_id: 1, store: 2, code: {n: 'x'}}"))))
                .contains(d("{$and: [{_id: {$nin: [1]}}, {store: {$eq: 2}, 'code.n': {$eq: 'x'}}]}"));
        assertThat(UniqueKeys.holders(List.of(STORE_CODE), List.of(d("{_id: 1, sku: 'a'}")))).isEmpty();
        // a partial index: only documents its filter selects hold keys in it
        assertThat(UniqueKeys.holders(List.of(PAID), List.of(d("{_id: 1, ref: 7, paid: true}"))))
                .contains(d("{$and: [{_id: {$nin: [1]}}, {$and: [{ref: {$eq: 7}}, {paid: true}]}]}"));
        // several documents, several indexes: any key of any of them; an operator-looking value is matched as a value
        assertThat(UniqueKeys.holders(List.of(SKU, STORE_CODE), List.of(d("{_id: 1, sku: 'a'}"), d("{_id: 2, sku: {$gt: 1}, store: 3}"))))
                .contains(d("{$and: [{_id: {$nin: [1, 2]}}, {$or: [{sku: {$eq: 'a'}}, {sku: {$eq: {$gt: 1}}},"
                        + " {store: {$eq: 3}, 'code.n': {$eq: null}}]}]}"));
        assertThat(UniqueKeys.holders(List.of(), List.of(d("{_id: 1, sku: 'a'}")))).isEqualTo(Optional.empty());
    }

    static BsonDocument update(String u, boolean upsert) {
        return d("{q: {_id: 1}, u: " + u + ", upsert: " + upsert + "}");
    }

    @Test
    void anUpdateMayChangeAKeyWhenItWritesAnOverlappingPathReplacesOrUpserts() {
        List<UniqueIndex> both = List.of(SKU, STORE_CODE);
        assertThat(UniqueKeys.mayChangeKey(both, update("{$set: {state: 'paid'}}", false))).isFalse();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$inc: {n: 1}, $unset: {skus: 1}}", false))).isFalse();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$set: {sku: 'b'}}", false))).isTrue();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$set: {'code.n': 'y'}}", false))).isTrue();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$set: {code: {n: 'y'}}}", false))).as("a parent of a key field").isTrue();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$set: {'code.m': 'y'}}", false))).as("a sibling").isFalse();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$rename: {old: 'sku'}}", false))).as("renamed into a key").isTrue();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$set: {'sku.$': 'b'}}", false))).isTrue();
        assertThat(UniqueKeys.mayChangeKey(both, update("{sku: 'b', createdAt: 1}", false))).as("a replacement").isTrue();
        assertThat(UniqueKeys.mayChangeKey(both, update("{$set: {state: 'x'}}", true))).as("an upsert may insert").isTrue();
        assertThat(UniqueKeys.mayChangeKey(both, d("{q: {_id: 1}, u: [{$set: {state: 'x'}}]}"))).as("a pipeline").isTrue();
        assertThat(UniqueKeys.mayChangeKey(List.of(), update("{$set: {sku: 'b'}}", true))).as("no unique index").isFalse();
    }
}
