package io.thermocline.tiering.worker;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.thermocline.config.ThermoclineConfig;

/**
 * The two clients a worker uses. Both read from the primary with majority read concern and write
 * with majority write concern: a worker must never act on, or acknowledge, a write that a failover
 * could roll back.
 */
public record TierClients(MongoClient fast, MongoClient archive) implements AutoCloseable {

    public static TierClients open(ThermoclineConfig config, String applicationName) {
        if (!config.tiers().tiered()) {
            throw new IllegalArgumentException("tiers.fast.uri: the workers need a fast tier; set tiers.fast.uri (pass-through mode has nothing to feed, evict or warm)");
        }
        return new TierClients(client(config.tiers().fast().uri(), applicationName),
                client(config.tiers().archive().uri(), applicationName));
    }

    public static MongoClient client(String uri, String applicationName) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applicationName(applicationName)
                .readPreference(ReadPreference.primary())
                .readConcern(ReadConcern.MAJORITY)
                .writeConcern(WriteConcern.MAJORITY)
                .build());
    }

    @Override
    public void close() {
        fast.close();
        archive.close();
    }
}
