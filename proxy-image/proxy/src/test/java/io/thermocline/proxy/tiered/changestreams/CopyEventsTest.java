package io.thermocline.proxy.tiered.changestreams;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.tiering.provenance.CopyMarks;
import io.thermocline.tiering.provenance.CopyMarks.Copied;
import java.util.List;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CopyEventsTest {

    static final Copied A = new Copied("shop.orders", new BsonInt32(1));
    static final Copied B = new Copied("shop.orders", new BsonInt32(2));
    static final Copied A_ELSEWHERE = new Copied("shop.other", new BsonInt32(1));

    @ParameterizedTest(name = "{0} of {1}, whole={2}, seen={3}, maybe inside={4} -> copy={5}")
    @CsvSource({
            // the proxy's own guarded transaction: every insert of a marked document is its copy
            "insert, A, true, false, false, true",
            "insert, A, true, true, false, true",
            "insert, A, true, false, true, true",
            // an application's transaction: the document's first event only, and only from the transaction's start
            "insert, A, false, false, false, true",
            "insert, A, false, true, false, false",
            "insert, A, false, false, true, false",
            // not marked, or not an insert
            "insert, B, true, false, false, false",
            "insert, A_ELSEWHERE, true, false, false, false",
            "update, A, true, false, false, false",
            "delete, A, true, false, false, false",
            "replace, A, true, false, false, false",
    })
    void rule(String operationType, String document, boolean whole, boolean seenBefore, boolean maybeInside, boolean copy) {
        Copied d = switch (document) {
            case "A" -> A;
            case "B" -> B;
            default -> A_ELSEWHERE;
        };
        assertThat(CopyEvents.isCopy(operationType, d, new CopyMarks.Mark(Set.of(A), whole), seenBefore, maybeInside)).isEqualTo(copy);
    }

    @Test
    void noMarkOrNoDocumentIsNeverACopy() {
        assertThat(CopyEvents.isCopy("insert", A, null, false, false)).isFalse();
        assertThat(CopyEvents.isCopy("insert", null, new CopyMarks.Mark(Set.of(A), true), false, false)).isFalse();
    }

    @Test
    void anApplicationsReinsertAfterItsCopyAndDeleteIsKept() {
        CopyEvents cursor = new CopyEvents(false);
        CopyEvents.Transaction t = new CopyEvents.Transaction(new BsonTimestamp(10, 1), 3);
        CopyMarks.Mark mark = new CopyMarks.Mark(Set.of(A), false);
        assertThat(cursor.isCopy(t, "insert", A, mark)).as("the copy").isTrue();
        assertThat(cursor.isCopy(t, "delete", A, mark)).isFalse();
        assertThat(cursor.isCopy(t, "insert", A, mark)).as("the re-insert").isFalse();
        // the next transaction starts afresh
        CopyEvents.Transaction next = new CopyEvents.Transaction(new BsonTimestamp(11, 1), 4);
        assertThat(cursor.isCopy(next, "insert", A, mark)).isTrue();
    }

    @Test
    void aResumedCursorKeepsInsertsOfItsFirstApplicationTransactionOnly() {
        CopyEvents cursor = new CopyEvents(true);
        CopyMarks.Mark application = new CopyMarks.Mark(Set.of(A), false);
        CopyMarks.Mark guarded = new CopyMarks.Mark(Set.of(B), true);
        assertThat(cursor.isCopy(new CopyEvents.Transaction(new BsonTimestamp(10, 1), 3), "insert", A, application)).isFalse();
        assertThat(cursor.isCopy(new CopyEvents.Transaction(new BsonTimestamp(11, 1), 4), "insert", A, application)).isTrue();
        assertThat(new CopyEvents(true).isCopy(new CopyEvents.Transaction(new BsonTimestamp(12, 1), 1), "insert", B, guarded)).isTrue();
    }

    @Test
    void marksRoundTripAndMerge() {
        List<BsonDocument> commands = CopyMarks.markCommands("shop.orders", List.of(new BsonInt32(1)));
        BsonDocument inserted = commands.get(0).getArray("documents").get(0).asDocument();
        CopyMarks.Mark parsed = CopyMarks.parse(inserted);
        assertThat(parsed).isEqualTo(new CopyMarks.Mark(Set.of(A), false));
        assertThat(commands.get(1).getArray("deletes").get(0).asDocument().getDocument("q")).isEqualTo(
                new BsonDocument("_id", inserted.get("_id")));
        assertThat(CopyMarks.parse(new BsonDocument("ns", new BsonString("shop.orders")))).isNull();
        CopyMarks.Mark whole = CopyMarks.parse(new BsonDocument("ns", new BsonString("shop.orders"))
                .append("ids", new BsonArray(List.of(new BsonInt32(2)))).append("whole", BsonBoolean.TRUE));
        assertThat(whole.merge(parsed)).isEqualTo(new CopyMarks.Mark(Set.of(A, B), false));
    }

    @Test
    void resumedMeansAResumeTokenInTheChangeStreamStage() {
        assertThat(ChangeStreamFilter.resumed(aggregate(new BsonDocument()))).isFalse();
        assertThat(ChangeStreamFilter.resumed(aggregate(new BsonDocument("resumeAfter", new BsonDocument())))).isTrue();
        assertThat(ChangeStreamFilter.resumed(aggregate(new BsonDocument("startAfter", new BsonDocument())))).isTrue();
        assertThat(ChangeStreamFilter.resumed(aggregate(new BsonDocument("startAtOperationTime", new BsonTimestamp(1, 1)))))
                .as("a transaction's events share one cluster time: a stream never starts inside one").isFalse();
        assertThat(ChangeStreamFilter.resumed(new BsonDocument("aggregate", new BsonString("orders")))).isFalse();
    }

    private static BsonDocument aggregate(BsonDocument stage) {
        return new BsonDocument("aggregate", new BsonString("orders"))
                .append("pipeline", new BsonArray(List.of(new BsonDocument("$changeStream", stage))));
    }
}
