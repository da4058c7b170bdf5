package io.thermocline.embedded.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.embedded.replication.ReplicationException;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** A retried (lsid, txnNumber) answered as mongod derives it from the statement's oplog entry. */
class RetriedAnswerTest {

    private static BsonDocument answer(String first, String firstReply, String now, String request) {
        return RetriedAnswer.of(first, BsonDocument.parse(firstReply), now, BsonDocument.parse(request));
    }

    @Test
    void theSameCommandGetsItsFirstReply() {
        assertThat(answer("update", "{n: 1, nModified: 1, ok: 1}", "update", "{}")).isEqualTo(BsonDocument.parse("{n: 1, nModified: 1, ok: 1}"));
    }

    @Test
    void anUpdateOverAnotherWriteReportsWhatItsEntryShows() {
        assertThat(answer("findAndModify", "{lastErrorObject: {n: 1, updatedExisting: true}, value: {_id: 1}, ok: 1}", "update", "{}"))
                .isEqualTo(BsonDocument.parse("{n: 1, nModified: 1, ok: 1.0}"));
        assertThat(answer("findAndModify", "{lastErrorObject: {n: 1, updatedExisting: false, upserted: 5}, value: null, ok: 1}", "update", "{}"))
                .isEqualTo(BsonDocument.parse("{n: 1, nModified: 0, upserted: [{index: 0, _id: 5}], ok: 1.0}"));
        assertThatThrownBy(() -> answer("delete", "{n: 1, ok: 1}", "update", "{}"))
                .isInstanceOfSatisfying(ReplicationException.class, e -> assertThat(e.code()).isEqualTo(40638));
    }

    @Test
    void aFindAndModifyOverAnInsertIsAnUpsertOrRefused() {
        String claim = "{n: 1, nModified: 0, upserted: [{index: 0, _id: {c: 1}}], ok: 1}";
        assertThatThrownBy(() -> answer("update", claim, "findAndModify", "{update: {$inc: {n: 1}}}"))
                .isInstanceOfSatisfying(ReplicationException.class, e -> assertThat(e.code()).isEqualTo(40608));
        assertThat(answer("update", claim, "findAndModify", "{update: {$inc: {n: 1}}, upsert: true}").getDocument("lastErrorObject"))
                .isEqualTo(BsonDocument.parse("{n: 1, updatedExisting: false, upserted: {c: 1}}"));
        assertThatThrownBy(() -> answer("update", "{n: 1, nModified: 1, ok: 1}", "findAndModify", "{new: true}"))
                .isInstanceOfSatisfying(ReplicationException.class, e -> assertThat(e.code()).isEqualTo(40611));
    }

    @Test
    void anInsertCountsItsDocuments() {
        assertThat(answer("update", "{n: 1, nModified: 0, upserted: [{index: 0, _id: 2}], ok: 1}", "insert", "{documents: [{_id: 2}]}"))
                .isEqualTo(BsonDocument.parse("{n: 1, ok: 1.0}"));
    }
}
