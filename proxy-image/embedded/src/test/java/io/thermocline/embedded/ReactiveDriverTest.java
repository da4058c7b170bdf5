package io.thermocline.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.changestream.ChangeStreamDocument;
import com.mongodb.client.model.changestream.OperationType;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** The reactive-streams driver against a three-member set: writes, a transaction and a change stream. */
class ReactiveDriverTest {
    private static EmbeddedReplicaSet rs;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        rs = EmbeddedReplicaSet.builder().name("rx").members(3).build().start();
        client = MongoClients.create(rs.connectionString());
    }

    @AfterAll
    static void stop() {
        client.close();
        rs.close();
    }

    /** Collects the first n items of a publisher (all of them when n is 0). */
    private static <T> List<T> take(Publisher<T> publisher, int n) throws Exception {
        CompletableFuture<List<T>> done = new CompletableFuture<>();
        publisher.subscribe(new Subscriber<T>() {
            private final List<T> items = new ArrayList<>();
            private Subscription subscription;

            public void onSubscribe(Subscription s) {
                subscription = s;
                s.request(n == 0 ? Long.MAX_VALUE : n);
            }

            public void onNext(T item) {
                items.add(item);
                if (n > 0 && items.size() == n) {
                    subscription.cancel();
                    done.complete(items);
                }
            }

            public void onError(Throwable t) {
                done.completeExceptionally(t);
            }

            public void onComplete() {
                done.complete(items);
            }
        });
        return done.get(20, TimeUnit.SECONDS);
    }

    @Test
    void changeStreamDeliversWritesToAReactiveSubscriber() throws Exception {
        MongoCollection<Document> coll = client.getDatabase("rx").getCollection("events");
        // the stream starts at a time read before the writes: it sees them however late its cursor opens (no sleep)
        ClientSession session = take(client.startSession(), 1).get(0);
        BsonTimestamp before;
        try {
            take(coll.countDocuments(session), 1);
            before = session.getOperationTime();
        } finally {
            session.close();
        }
        CompletableFuture<List<ChangeStreamDocument<Document>>> events = CompletableFuture.supplyAsync(() -> {
            try {
                return take(coll.watch().startAtOperationTime(before), 2);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        take(coll.insertOne(new Document("_id", 1)), 0);
        take(coll.deleteOne(new Document("_id", 1)), 0);
        List<ChangeStreamDocument<Document>> got = events.get(20, TimeUnit.SECONDS);
        assertThat(got)
                .extracting(ChangeStreamDocument::getOperationType)
                .containsExactly(OperationType.INSERT, OperationType.DELETE);
    }

    @Test
    void reactiveTransactionCommitsAtomically() throws Exception {
        MongoCollection<Document> coll = client.getDatabase("rx").getCollection("txn");
        ClientSession session = take(client.startSession(), 1).get(0);
        try {
            session.startTransaction();
            take(coll.insertOne(session, new Document("_id", 1)), 0);
            take(coll.insertOne(session, new Document("_id", 2)), 0);
            take(session.commitTransaction(), 0);
        } finally {
            session.close();
        }
        assertThat(take(coll.countDocuments(), 1)).containsExactly(2L);
    }
}
