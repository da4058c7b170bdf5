package io.thermocline.proxy;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.event.ConnectionCheckedOutEvent;
import org.bson.Document;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/** The Java driver negotiating each compressor with the proxy, then moving real data compressed. */
class DriverCompressionTest {
    private static ProxyFixture fixture;

    @BeforeAll
    static void start() {
        fixture = ProxyFixture.start();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"snappy", "zlib", "zstd"})
    void eachCompressorCarriesCrudAndCursors(String compressor) {
        try (MongoClient client = MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(fixture.uri() + "/?compressors=" + compressor))
                .applyToClusterSettings(b -> b.serverSelectionTimeout(5, TimeUnit.SECONDS)).build())) {
            Document hello = client.getDatabase("admin").runCommand(new Document("hello", 1).append("compression", java.util.List.of(compressor)));
            assertThat(hello.getList("compression", String.class)).containsExactly(compressor);
            MongoCollection<Document> coll = client.getDatabase("compress").getCollection(compressor);
            coll.drop();
            coll.insertMany(IntStream.range(0, 300).mapToObj(i -> new Document("_id", i).append("text", "lorem ipsum ".repeat(50))).toList());
            assertThat(coll.find().batchSize(7).into(new ArrayList<>())).hasSize(300);
            assertThat(coll.countDocuments()).isEqualTo(300);
        }
    }
}
