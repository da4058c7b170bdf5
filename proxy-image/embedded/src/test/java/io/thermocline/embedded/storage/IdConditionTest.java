package io.thermocline.embedded.storage;

import static org.assertj.core.api.Assertions.assertThat;

import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

class IdConditionTest {

    /** A filter as it comes in a command (a delete statement of a document sequence) is raw bytes: it is never edited in place. */
    @Test
    void aRawFilterWithIdAndOtherFieldsIsSplitWithoutEditingIt() {
        BsonDocument filter =
                new RawBsonDocument(BsonDocument.parse("{_id: 7, status: 'open'}"), new BsonDocumentCodec());
        IdIndexScan.IdRestricted split = IdIndexScan.idCondition(filter).orElseThrow();
        assertThat(split.rest()).isEqualTo(BsonDocument.parse("{status: 'open'}"));
        assertThat(filter).isEqualTo(BsonDocument.parse("{_id: 7, status: 'open'}"));
    }
}
