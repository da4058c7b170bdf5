package io.thermocline.tiering.worker;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.ReadConcern;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoClients;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.TlsConfig;
import io.thermocline.security.tls.PemTrust;

import java.nio.file.Path;

/**
 * The two clients a worker uses. Both read from the primary with majority read concern and write
 * with majority write concern: a worker must never act on, or acknowledge, a write that a failover
 * could roll back. Each logs in with the credentials of its connection string (the worker's own
 * user) and, with {@code tls.tierCaFile}, speaks TLS trusting only that CA, host names checked.
 */
public record TierClients(MongoClient fast, MongoClient archive) implements AutoCloseable {

    public static TierClients open(ThermoclineConfig config, String applicationName) {
        if (!config.tiers().tiered()) {
            throw new IllegalArgumentException("tiers.fast.uri: the workers need a fast tier; set tiers.fast.uri (pass-through mode has nothing to feed, evict or warm)");
        }
        return new TierClients(client(config.tiers().fast().uri(), applicationName, config.tls()),
                client(config.tiers().archive().uri(), applicationName, config.tls()));
    }

    /** A client without TLS settings beyond the connection string's. */
    public static MongoClient client(String uri, String applicationName) {
        return client(uri, applicationName, TlsConfig.defaults());
    }

    public static MongoClient client(String uri, String applicationName, TlsConfig tls) {
        return client(uri, applicationName, tls, null);
    }

    /**
     * As {@link #client(String, String, TlsConfig)}, giving up selecting a member after {@code serverSelection}
     * (the driver's 30 s when null): a request path that must fail fast while a tier is down.
     */
    public static MongoClient client(String uri, String applicationName, TlsConfig tls, java.time.Duration serverSelection) {
        MongoClientSettings.Builder b = settings(uri, tls);
        if (serverSelection != null) {
            b.applyToClusterSettings(c -> c.serverSelectionTimeout(serverSelection.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
        }
        return MongoClients.create(b
                .applicationName(applicationName)
                // always: the feeder's archive writes rely on txnNumbers to refuse a late, abandoned write (ArchiveWriter)
                .retryWrites(true)
                .readPreference(ReadPreference.primary())
                .readConcern(ReadConcern.MAJORITY)
                .writeConcern(WriteConcern.MAJORITY)
                .build());
    }

    /**
     * Driver settings for any data-plane client of a tier: the connection string as given (its
     * credentials are the data plane's user) and, when {@code tls.tierCaFile} is set, TLS trusting
     * only those CAs, with the member's host name checked against its certificate.
     */
    public static MongoClientSettings.Builder settings(String uri, TlsConfig tls) {
        MongoClientSettings.Builder b = MongoClientSettings.builder().applyConnectionString(new ConnectionString(uri));
        if (tls.tierCaFile() != null && !tls.tierCaFile().isBlank()) {
            b.applyToSslSettings(ssl -> ssl.enabled(true).invalidHostNameAllowed(false)
                    .context(PemTrust.sslContext(Path.of(tls.tierCaFile()))));
        }
        return b;
    }

    @Override
    public void close() {
        fast.close();
        archive.close();
    }
}
