package io.thermocline.proxy.tiered.writes;

import static org.assertj.core.api.Assertions.assertThat;

import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** The collation of a write statement is kept, option by option, for the queries that resolve its targets. */
class StatementCollationTest {

    @Test
    void everyCollationOptionIsKept() {
        BsonDocument collation = BsonDocument.parse("{locale: 'en', caseLevel: true, caseFirst: 'upper', strength: 2,"
                + " numericOrdering: true, alternate: 'shifted', maxVariable: 'space', normalization: true, backwards: false}");
        BsonDocument statement = new BsonDocument("q", new BsonDocument()).append("collation", collation);
        assertThat(Statements.collation(statement).asDocument()).isEqualTo(collation);
    }

    @Test
    void aStatementWithoutCollationHasNone() {
        assertThat(Statements.collation(BsonDocument.parse("{q: {sku: 'a'}}"))).isNull();
    }
}
