package io.thermocline.operator.tiering;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.operator.fasttier.tls.FastTierTrust;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * One MongoDB client per connection string, kept between polls (a poll no longer pays for a
 * connection handshake and authentication); a client unused for {@code idle} is closed, so
 * a rotated password or a deleted cluster does not keep connections open.
 */
public final class TierClients implements AutoCloseable {

    private record Entry(MongoClient client, Instant lastUsed) {
    }

    private final Map<String, Entry> clients = new ConcurrentHashMap<>();
    private final Duration idle;
    private final int timeoutSeconds;
    private final Clock clock;

    public TierClients(Duration idle, int timeoutSeconds, Clock clock) {
        this.idle = idle;
        this.timeoutSeconds = timeoutSeconds;
        this.clock = clock;
    }

    public MongoClient forUri(String uri) {
        Instant now = clock.instant();
        clients.entrySet().removeIf(e -> {
            boolean stale = !e.getKey().equals(uri) && e.getValue().lastUsed().plus(idle).isBefore(now);
            if (stale) {
                e.getValue().client().close();
            }
            return stale;
        });
        return clients.compute(uri, (key, entry) -> new Entry(entry == null ? create(key) : entry.client(), now)).client();
    }

    /** Closes the client of {@code uri} now (its cluster was deleted). */
    public void forget(String uri) {
        Entry e = clients.remove(uri);
        if (e != null) {
            e.client().close();
        }
    }

    int size() {
        return clients.size();
    }

    private MongoClient create(String uri) {
        ConnectionString connection = new ConnectionString(uri);
        MongoClientSettings.Builder settings = MongoClientSettings.builder().applyConnectionString(connection);
        if (Boolean.TRUE.equals(connection.getSslEnabled())) { // a fast tier with TLS: exactly its CA, host names checked
            FastTierTrust.forHosts(connection.getHosts()).ifPresent(context ->
                    settings.applyToSslSettings(ssl -> ssl.enabled(true).invalidHostNameAllowed(false).context(context)));
        }
        return MongoClients.create(settings
                .applicationName("thermocline-operator")
                .applyToClusterSettings(c -> c.serverSelectionTimeout(timeoutSeconds, TimeUnit.SECONDS))
                .applyToSocketSettings(s -> s.connectTimeout(timeoutSeconds, TimeUnit.SECONDS)
                        .readTimeout(timeoutSeconds, TimeUnit.SECONDS))
                .build());
    }

    @Override
    public void close() {
        clients.values().forEach(e -> e.client().close());
        clients.clear();
    }
}
