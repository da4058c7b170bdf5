package io.thermocline.embedded.session;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.Operation;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What an open transaction tells readers and writers: the documents it holds and their versions before it. */
@Timeout(10)
class TransactionTest {

    static Change change(Operation op, String collection, BsonValue id, BsonDocument preImage) {
        return new Change(op, "d", collection, new BsonDocument("_id", id), null, null, preImage);
    }

    @Test
    void eachDocumentKeepsItsVersionBeforeTheTransactionEvenWhenItDidNotExist() {
        Transaction t = new Transaction(new BsonDocument(), 1, 0, Long.MAX_VALUE);
        BsonDocument committed = new BsonDocument("_id", new BsonInt32(2)).append("n", new BsonInt32(0));
        t.stage(change(Operation.INSERT, "c", new BsonInt32(1), null));
        t.stage(change(Operation.UPDATE, "c", new BsonInt32(1), new BsonDocument("_id", new BsonInt32(1))));
        t.stage(change(Operation.UPDATE, "c", new BsonInt32(2), committed));
        t.stage(change(
                Operation.DELETE, "c", new BsonInt32(2), committed.clone().append("n", new BsonInt32(1))));
        t.stage(change(Operation.INSERT, "other", new BsonInt32(3), null));

        Map<BsonValue, BsonDocument> versions = t.committedVersions("d", "c");
        assertThat(versions.keySet()).containsExactly(new BsonInt32(1), new BsonInt32(2));
        assertThat(versions.get(new BsonInt32(1)))
                .as("inserted by the transaction: absent before")
                .isNull();
        assertThat(versions.get(new BsonInt32(2)))
                .as("the first change's pre-image")
                .isEqualTo(committed);
        assertThat(t.committedVersions("d", "none")).isEmpty();
        assertThat(t.touches("d", "c", new BsonInt32(2))).isTrue();
        assertThat(t.touches("d", "c", new BsonInt32(3)))
                .as("another collection's document")
                .isFalse();
        assertThat(t.touches("d", "other", new BsonInt32(3))).isTrue();
    }

    @Test
    void aDocumentIdIsTheSameWhetherRawOrDecoded() {
        Transaction t = new Transaction(new BsonDocument(), 1, 0, Long.MAX_VALUE);
        BsonDocument id = new BsonDocument("ns", new BsonString("shop.orders")).append("id", new BsonInt32(7));
        t.stage(change(Operation.INSERT, "fences", RawBsonDocument.parse(id.toJson()), null));

        assertThat(t.touches("d", "fences", id)).isTrue();
        assertThat(t.touches("d", "fences", RawBsonDocument.parse(id.toJson()))).isTrue();
        assertThat(t.committedVersions("d", "fences")).containsKey(id);
        assertThat(t.touches("d", "fences", new BsonDocument("ns", new BsonString("shop.orders"))))
                .isFalse();
    }
}
