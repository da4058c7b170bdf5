package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoChangeStreamCursor;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.FullDocument;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * {@code fullDocument: "updateLookup"} reads the committed version, as a server's lookup does:
 * a delete or update inside a transaction that is still open (and may abort) stays invisible.
 * The feeder relies on it: a lookup that saw an uncommitted delete would mirror nothing and
 * lose the update when the transaction then aborts.
 */
class UpdateLookupIsolationTest {

    @Test
    void lookupDoesNotSeeAnOpenTransactionsWrites() {
        try (EmbeddedReplicaSet set = EmbeddedReplicaSet.startSingle();
             MongoClient client = MongoClients.create(set.connectionString())) {
            MongoCollection<Document> c = client.getDatabase("iso").getCollection("docs");
            c.insertOne(new Document("_id", 1).append("v", 0));
            c.insertOne(new Document("_id", 2).append("v", 0));
            try (MongoChangeStreamCursor<ChangeStreamDocument<Document>> stream =
                         c.watch().fullDocument(FullDocument.UPDATE_LOOKUP).cursor()) {
                c.updateOne(Filters.eq("_id", 1), Updates.set("v", 1));
                c.updateOne(Filters.eq("_id", 2), Updates.set("v", 1));
                try (ClientSession session = client.startSession()) {
                    session.startTransaction();
                    c.deleteOne(session, Filters.eq("_id", 1));
                    c.updateOne(session, Filters.eq("_id", 2), Updates.set("v", 99));
                    ChangeStreamDocument<Document> first = stream.next();
                    ChangeStreamDocument<Document> second = stream.next();
                    assertThat(first.getFullDocument()).isEqualTo(new Document("_id", 1).append("v", 1));
                    assertThat(second.getFullDocument()).isEqualTo(new Document("_id", 2).append("v", 1));
                    session.abortTransaction();
                }
            }
        }
    }
}
