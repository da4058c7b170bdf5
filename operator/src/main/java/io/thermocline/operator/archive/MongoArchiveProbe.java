package io.thermocline.operator.archive;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.MongoSecurityException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ReadPreference;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.bson.Document;

/** The real probe: the MongoDB sync driver, short timeouts, {@code hello} and {@code buildInfo}. */
@ApplicationScoped
public class MongoArchiveProbe implements ArchiveProbe {

    private final Duration timeout;

    public MongoArchiveProbe() {
        this(Duration.ofSeconds(5));
    }

    public MongoArchiveProbe(Duration timeout) {
        this.timeout = timeout;
    }

    @Override
    public ArchiveReport probe(ArchiveConnection connection) {
        MongoClientSettings settings;
        try {
            settings = settings(connection);
        } catch (UnusableConnection e) {
            return e.report;
        }
        try (MongoClient client = MongoClients.create(settings)) {
            var admin = client.getDatabase("admin").withReadPreference(ReadPreference.primaryPreferred());
            Document hello = admin.runCommand(new Document("hello", 1));
            String setName = hello.getString("setName");
            if (setName == null) {
                return new ArchiveReport.Unusable("NotAReplicaSet",
                        "the archive is not a replica set member (hello has no setName); the feeder needs change streams, so point the Secret at a replica set");
            }
            if (hello.getString("primary") == null) {
                return new ArchiveReport.Unusable("NoPrimary",
                        "replica set " + setName + " has no primary; check the archive's members and elections");
            }
            Document buildInfo = admin.runCommand(new Document("buildInfo", 1));
            Document status = admin.runCommand(new Document("connectionStatus", 1).append("showPrivileges", true));
            return new ArchiveReport.Reachable(buildInfo.getString("version"), setName, ArchivePrivileges.from(status));
        } catch (MongoSecurityException e) {
            return new ArchiveReport.Unusable("AuthenticationFailed",
                    "the archive rejected the credentials in the connection string; fix the user or password in the Secret");
        } catch (MongoTimeoutException e) {
            return new ArchiveReport.Unusable("Unreachable",
                    "no archive member answered within " + timeout.toSeconds() + "s; check hosts, network policies and TLS settings");
        } catch (MongoCommandException e) {
            return new ArchiveReport.Unusable("CommandFailed",
                    "the archive answered hello/buildInfo with error " + e.getErrorCode() + " (" + e.getErrorCodeName()
                            + "); the connection string's user needs the clusterMonitor role");
        } catch (MongoException | IllegalArgumentException e) {
            return new ArchiveReport.Unusable("Unreachable",
                    "probing the archive failed: " + e.getClass().getSimpleName() + "; check the connection string and the network");
        }
    }

    @Override
    public Optional<List<String>> holdingData(ArchiveConnection connection, List<String> namespaces) {
        try (MongoClient client = MongoClients.create(settings(connection))) {
            List<String> holding = new ArrayList<>();
            for (String namespace : namespaces) {
                String[] parts = namespace.split("\\.", 2);
                // one _id, not a count: exact (an estimated count may read 0 after an unclean shutdown) and as cheap
                Document any = client.getDatabase(parts[0]).withReadPreference(ReadPreference.primaryPreferred())
                        .getCollection(parts[1]).find().projection(new Document("_id", 1)).limit(1).first();
                if (any != null) {
                    holding.add(namespace);
                }
            }
            return Optional.of(holding);
        } catch (UnusableConnection | MongoException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private MongoClientSettings settings(ArchiveConnection connection) throws UnusableConnection {
        ConnectionString uri;
        try {
            uri = new ConnectionString(connection.uri());
        } catch (IllegalArgumentException e) {
            throw new UnusableConnection("InvalidUri",
                    "the archive Secret does not hold a valid mongodb:// connection string; fix the Secret's value");
        }
        MongoClientSettings.Builder settings = MongoClientSettings.builder()
                .applyConnectionString(uri)
                .applicationName("thermocline-operator")
                .applyToClusterSettings(c -> c.serverSelectionTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
                .applyToSocketSettings(s -> s.connectTimeout((int) timeout.toMillis(), TimeUnit.MILLISECONDS)
                        .readTimeout((int) timeout.toMillis() * 2, TimeUnit.MILLISECONDS));
        if (connection.caPem() != null) {
            try {
                SSLContext context = PemTrust.sslContext(connection.caPem());
                settings.applyToSslSettings(s -> s.enabled(true).context(context));
            } catch (IllegalArgumentException e) {
                throw new UnusableConnection("InvalidCa", e.getMessage() + "; put the PEM CA bundle into the CA Secret");
            }
        }
        return settings.build();
    }

    /** The connection cannot even be set up: the report says why. */
    private static final class UnusableConnection extends Exception {
        private final transient ArchiveReport.Unusable report;

        UnusableConnection(String reason, String message) {
            super(reason, null, false, false);
            this.report = new ArchiveReport.Unusable(reason, message);
        }
    }
}
