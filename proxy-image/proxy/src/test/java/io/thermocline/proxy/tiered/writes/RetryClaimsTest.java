package io.thermocline.proxy.tiered.writes;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.CollectionPolicy;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The pure parts of exactly-once retries: reading claims out of replies, combining replies, which writes claim. */
class RetryClaimsTest {

    static final String CLAIM = "{thermoclineClaim: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}, txnNumber: 3, statement: ";
    static final CollectionPolicy POLICY = new CollectionPolicy("shop", "orders", "createdAt", Duration.ofHours(1));

    private static List<Boolean> claimed(String reply, int statements) {
        return RetryClaims.claimedIn(BsonDocument.parse(reply), statements);
    }

    @Test
    void claimKeysAmongUpsertedIdsMarkTheirStatements() {
        assertThat(claimed("{n: 2, nModified: 0, upserted: [{index: 0, _id: " + CLAIM + "0}}, {index: 1, _id: " + CLAIM + "1}}], ok: 1}", 2))
                .containsExactly(true, true);
        // the fast tier answered statement 0 from the client's own first attempt (an update), statement 1 is claimed
        assertThat(claimed("{n: 2, nModified: 1, upserted: [{index: 1, _id: " + CLAIM + "1}}], ok: 1}", 2)).containsExactly(false, true);
        // an upsert of the client's own document is no claim
        assertThat(claimed("{n: 1, nModified: 0, upserted: [{index: 0, _id: 7}], ok: 1}", 1)).containsExactly(false);
        assertThat(claimed("{n: 1, nModified: 1, ok: 1}", 1)).containsExactly(false);
    }

    @Test
    void aFindAndModifyAnsweredFromAClaimIsTheProxys() {
        assertThat(claimed("{lastErrorObject: {n: 1, updatedExisting: false, upserted: " + CLAIM + "0}}, value: null, ok: 1}", 1))
                .containsExactly(true);
        assertThat(claimed("{ok: 0, code: 40608, errmsg: 'findAndModify retry request is not compatible'}", 1)).containsExactly(true);
        assertThat(claimed("{lastErrorObject: {n: 1, updatedExisting: true}, value: {_id: 1, n: 1}, ok: 1}", 1)).containsExactly(false);
        assertThat(claimed("{ok: 0, code: 11000}", 1)).containsExactly(false);
    }

    @Test
    void aReplyCombinesTheFastTiersStatementsWithTheProxys() {
        // statements 0 and 2 ran on the fast tier (an update, an upsert of 9), 1 and 3 were claimed
        BsonDocument base = BsonDocument.parse("{n: 4, nModified: 1, upserted: [{index: 1, _id: " + CLAIM + "1}}, {index: 2, _id: 9},"
                + " {index: 3, _id: " + CLAIM + "3}}], ok: 1}");
        // the proxy ran [1, 3]: 1 matched and changed, 3 failed
        BsonDocument proxyRan = BsonDocument.parse("{n: 1, nModified: 1, writeErrors: [{index: 1, code: 11000, errmsg: 'dup'}], ok: 1}");
        BsonDocument combined = RetryClaims.combined(base, List.of(false, true, false, true), proxyRan);
        assertThat(combined).isEqualTo(BsonDocument.parse("{n: 3, nModified: 2, upserted: [{index: 2, _id: 9}],"
                + " writeErrors: [{index: 3, code: 11000, errmsg: 'dup'}], ok: 1.0}"));
        BsonDocument proxyUpserted = BsonDocument.parse("{n: 2, nModified: 0, upserted: [{index: 0, _id: 5}, {index: 1, _id: 6}], ok: 1}");
        assertThat(RetryClaims.combined(base, List.of(false, true, false, true), proxyUpserted).getArray("upserted"))
                .isEqualTo(BsonDocument.parse("{u: [{index: 1, _id: 5}, {index: 2, _id: 9}, {index: 3, _id: 6}]}").getArray("u"));
        BsonDocument error = BsonDocument.parse("{ok: 0, code: 262}");
        assertThat(RetryClaims.combined(base, List.of(false, true, false, true), error)).isSameAs(error);
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
        // only a statement that every coverage routes as a point write is never forwarded: no claim needed
        "{update: 'orders', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}}]}                                   | true",
        "{update: 'orders', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}, upsert: true}]}                     | true",
        "{update: 'orders', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}}, {q: {_id: 2}, u: {$set: {a: 1}}}]} | true",
        "{update: 'orders', updates: [{q: {_id: 1, createdAt: {$gte: {$date: '2026-01-01T00:00:00Z'}}}, u: {$inc: {n: 1}}}]} | false",
        "{update: 'orders', updates: [{q: {tag: 'a'}, u: {$inc: {n: 1}}}]}                                 | false",
        "{update: 'orders', updates: [{q: {_id: 1}, u: {$inc: {n: 1}}}, {q: {tag: 'a'}, u: {$set: {a: 1}}}]} | false",
        "{findAndModify: 'orders', query: {_id: 1}, update: {$inc: {n: 1}}}                                | true",
        "{findAndModify: 'orders', query: {tag: 'a', createdAt: {$gte: {$date: '2026-01-01T00:00:00Z'}}}, update: {$inc: {n: 1}}} | false",
    })
    void onlyWritesThatMayBeForwardedClaim(String command, boolean alwaysGuarded) {
        assertThat(ExactlyOnce.alwaysGuarded(BsonDocument.parse(command), POLICY)).isEqualTo(alwaysGuarded);
    }
}
