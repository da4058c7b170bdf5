package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoWriteException;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import com.mongodb.reactivestreams.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The official reactive-streams driver through the proxy, many operations in flight at once. */
class ReactiveDriverTest {
    private static final Duration T = Duration.ofSeconds(30);
    private static ProxyFixture fixture;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        fixture = ProxyFixture.start();
        client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(fixture.uri()))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS)).build());
    }

    @AfterAll
    static void stop() {
        client.close();
        fixture.close();
    }

    @Test
    void concurrentCrudAndCursorsThroughFewBackendConnections() {
        MongoCollection<Document> coll = client.getDatabase("rx").getCollection("items");
        Mono.from(coll.drop()).block(T);
        Flux.range(0, 200).flatMap(i -> coll.insertOne(new Document("_id", i).append("g", i % 5)), 32).blockLast(T);
        assertThat(Mono.from(coll.countDocuments()).block(T)).isEqualTo(200);
        List<Integer> ids = Flux.from(coll.find().sort(Sorts.ascending("_id")).batchSize(7))
                .map(d -> d.getInteger("_id")).collectList().block(T);
        assertThat(ids).containsExactlyElementsOf(IntStream.range(0, 200).boxed().toList());
        Flux.range(0, 50).flatMap(i -> coll.updateOne(Filters.eq("_id", i), Updates.set("u", true)), 16).blockLast(T);
        assertThat(Mono.from(coll.countDocuments(Filters.eq("u", true))).block(T)).isEqualTo(50);
        List<Long> parallelCounts = Flux.range(0, 5)
                .flatMap(g -> Mono.from(coll.countDocuments(Filters.eq("g", g))), 5).collectList().block(T);
        assertThat(parallelCounts).containsOnly(40L);
        assertThatThrownBy(() -> Mono.from(coll.insertOne(new Document("_id", 3))).block(T))
                .isInstanceOfSatisfying(MongoWriteException.class, e -> assertThat(e.getCode()).isEqualTo(11000));
    }
}
