package io.thermocline.proxy.tiered.writes;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which updates may trust their own reply to prove the fast tier held their document, and which replies prove it. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class HeldPointUpdateRulesTest {

    static final List<BsonValue> FIVE = List.of(new BsonInt32(5));

    static BsonDocument update(String... statements) {
        return BsonDocument.parse("{update: 'orders', updates: [" + String.join(",", statements) + "]}");
    }

    @Test
    void onlyOneStatementWhoseFilterIsTheIdItselfQualifies() {
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 5}, u: {$set: {a: 1}}}"), FIVE)).isTrue();
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 5}, u: {$set: {a: 1}}, upsert: true}"), FIVE)).isTrue();
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 5}, u: {a: 1}, collation: {locale: 'simple'}}"), FIVE)).isTrue();
        // another condition may not match a held document: no match would not mean it was absent
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 5, state: 'open'}, u: {$set: {a: 1}}}"), FIVE)).isFalse();
        assertThat(HeldPointUpdate.applies(update("{q: {_id: {$in: [5]}}, u: {$set: {a: 1}}}"), FIVE)).isFalse();
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 6}, u: {$set: {a: 1}}}"), FIVE)).isFalse();
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 5}, u: {$set: {a: 1}}, collation: {locale: 'en', strength: 2}}"), FIVE))
                .isFalse();
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 5}, u: {$set: {a: 1}}}", "{q: {_id: 5}, u: {$set: {b: 1}}}"), FIVE)).isFalse();
        assertThat(HeldPointUpdate.applies(BsonDocument.parse("{findAndModify: 'orders', query: {_id: 5}, update: {$set: {a: 1}}}"), FIVE))
                .isFalse();
        assertThat(HeldPointUpdate.applies(update("{q: {_id: 5}, u: {$set: {a: 1}}, collation: {locale: 5}}"), FIVE))
                .as("a malformed collation is the server's to refuse, on the checked path").isFalse();
        // an _id that is itself a document is equality, not an operator
        assertThat(HeldPointUpdate.applies(update("{q: {_id: {k: 5}}, u: {$set: {a: 1}}}"), List.of(BsonDocument.parse("{k: 5}")))).isTrue();
    }

    @Test
    void onlyOneMatchWithNothingUpsertedProvesTheDocumentWasThere() {
        assertThat(HeldPointUpdate.proved(BsonDocument.parse("{n: 1, nModified: 1, ok: 1.0}"))).isTrue();
        assertThat(HeldPointUpdate.proved(BsonDocument.parse("{n: 1, nModified: 0, ok: 1.0}"))).as("matched, unchanged").isTrue();
        assertThat(HeldPointUpdate.proved(BsonDocument.parse("{n: 0, nModified: 0, ok: 1.0}"))).isFalse();
        assertThat(HeldPointUpdate.proved(BsonDocument.parse("{n: 1, nModified: 0, upserted: [{index: 0, _id: 5}], ok: 1.0}"))).isFalse();
        assertThat(HeldPointUpdate.proved(BsonDocument.parse("{n: 0, writeErrors: [{index: 0, code: 66, errmsg: 'x'}], ok: 1.0}")))
                .isFalse();
        assertThat(HeldPointUpdate.proved(BsonDocument.parse("{n: 1, writeConcernError: {code: 64, errmsg: 'x'}, ok: 1.0}"))).isFalse();
        assertThat(HeldPointUpdate.proved(BsonDocument.parse("{ok: 0.0, code: 112, errmsg: 'WriteConflict'}"))).isFalse();
    }
}
