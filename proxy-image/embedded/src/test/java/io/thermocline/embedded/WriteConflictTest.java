package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.mongodb.MongoException;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Two transactions writing one document: the second gets WriteConflict (112), labelled transient, for every write kind. */
class WriteConflictTest {

    @Test
    void deleteAndUpdateConflictingWithAnOpenTransactionAreTransientWriteConflicts() {
        try (EmbeddedReplicaSet set = EmbeddedReplicaSet.startSingle();
             MongoClient client = MongoClients.create(set.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("conflict").getCollection("docs");
            c.insertOne(new Document("_id", 1).append("v", 0));
            try (ClientSession first = client.startSession(); ClientSession second = client.startSession()) {
                first.startTransaction();
                c.updateOne(first, Filters.eq("_id", 1), Updates.set("v", 1));

                second.startTransaction();
                MongoException delete = catchThrowableOfType(MongoException.class, () -> c.deleteOne(second, Filters.eq("_id", 1)));
                assertThat(delete.getCode()).isEqualTo(112);
                assertThat(delete.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)).isTrue();
                second.abortTransaction();

                second.startTransaction();
                MongoException update = catchThrowableOfType(MongoException.class,
                        () -> c.updateOne(second, Filters.eq("_id", 1), Updates.set("v", 2)));
                assertThat(update.getCode()).isEqualTo(112);
                assertThat(update.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL)).isTrue();
                second.abortTransaction();
                first.commitTransaction();
            }
            assertThat(c.find(Filters.eq("_id", 1)).first().getInteger("v")).isEqualTo(1);
        }
    }
}
