package io.thermocline.proxy.tiered.changestreams;

import static org.assertj.core.api.Assertions.assertThat;

import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which application change streams get the proxy's lookup of a document the fast tier no longer holds. */
class UpdateLookupStreamsTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "[{$changeStream: {fullDocument: 'updateLookup'}}] | true",
                "[{$changeStream: {fullDocument: 'updateLookup', resumeAfter: {_data: 'x'}}}] | true",
                "[{$changeStream: {fullDocument: 'updateLookup'}}, {$match: {operationType: 'update'}}] | true",
                // stages that ran on the fast tier's null: the proxy cannot redo them
                "[{$changeStream: {fullDocument: 'updateLookup'}}, {$match: {'fullDocument.state': 'paid'}}] | false",
                "[{$changeStream: {fullDocument: 'updateLookup'}}, {$project: {documentKey: 1}}] | false",
                "[{$changeStream: {fullDocument: 'updateLookup'}}, {$addFields: {x: 1}}] | false",
                // no lookup asked, or post-images (stored with the write, whichever tier holds the document now)
                "[{$changeStream: {}}] | false",
                "[{$changeStream: {fullDocument: 'default'}}] | false",
                "[{$changeStream: {fullDocument: 'whenAvailable'}}] | false",
                "[{$changeStream: {fullDocument: 'required'}}] | false",
                "[{$match: {}}] | false",
                "[] | false"
            })
    void looksUpOnlyWhereTheFastTiersNullIsAllItChanged(String pipeline, boolean looksUp) {
        BsonDocument aggregate = BsonDocument.parse("{aggregate: 'orders', pipeline: " + pipeline + ", cursor: {}}");
        assertThat(ChangeStreamFilter.looksUp(aggregate)).isEqualTo(looksUp);
    }
}
