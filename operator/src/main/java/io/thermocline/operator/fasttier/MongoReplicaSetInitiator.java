package io.thermocline.operator.fasttier;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoCredential;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.jboss.logging.Logger;

/**
 * Initiates the fast tier through member 0 with a direct connection (the only way to reach
 * an uninitiated member), then reconfigures through the primary one member at a time, as
 * MongoDB requires for voting members. Finally ensures the data plane's user exists.
 */
@ApplicationScoped
public class MongoReplicaSetInitiator implements ReplicaSetInitiator {

    private static final Logger LOG = Logger.getLogger(MongoReplicaSetInitiator.class);
    private static final int NOT_YET_INITIALIZED = 94;
    private final Duration timeout;

    public MongoReplicaSetInitiator() {
        this(Duration.ofSeconds(5));
    }

    public MongoReplicaSetInitiator(Duration timeout) {
        this.timeout = timeout;
    }

    @Override
    public ReplicaSetState ensure(ReplicaSetTarget target) {
        try {
            try (MongoClient direct = client(target, "mongodb://" + target.members().get(0) + "/?directConnection=true")) {
                MongoDatabase admin = direct.getDatabase("admin");
                try {
                    admin.runCommand(new Document("replSetGetStatus", 1));
                } catch (MongoCommandException e) {
                    if (e.getErrorCode() != NOT_YET_INITIALIZED) {
                        throw e;
                    }
                    admin.runCommand(new Document("replSetInitiate", new Document("_id", target.replicaSetName())
                            .append("members", List.of(new Document("_id", 0).append("host", target.members().get(0))))));
                    LOG.infof("event=replicaset-initiated replicaSet=%s", target.replicaSetName());
                    return new ReplicaSetState.Converging("Initiating", "replica set " + target.replicaSetName() + " initiated on member 0");
                }
            }
            String all = "mongodb://" + String.join(",", target.members()) + "/?replicaSet=" + target.replicaSetName();
            try (MongoClient set = client(target, all)) {
                MongoDatabase admin = set.getDatabase("admin");
                Document config = admin.runCommand(new Document("replSetGetConfig", 1)).get("config", Document.class);
                List<Document> members = new ArrayList<>(config.getList("members", Document.class));
                List<String> hosts = members.stream().map(m -> m.getString("host")).toList();
                for (String wanted : target.members()) {
                    if (!hosts.contains(wanted)) {
                        int id = members.stream().mapToInt(m -> m.getInteger("_id")).max().orElse(-1) + 1;
                        members.add(new Document("_id", id).append("host", wanted));
                        reconfigure(admin, config, members);
                        LOG.infof("event=replicaset-member-added replicaSet=%s host=%s", target.replicaSetName(), wanted);
                        return new ReplicaSetState.Converging("AddingMember", "adding " + wanted + " to the replica set");
                    }
                }
                for (int i = members.size() - 1; i >= 0; i--) {
                    String host = members.get(i).getString("host");
                    if (!target.members().contains(host)) {
                        members.remove(i);
                        reconfigure(admin, config, members);
                        LOG.infof("event=replicaset-member-removed replicaSet=%s host=%s", target.replicaSetName(), host);
                        return new ReplicaSetState.Converging("RemovingMember", "removing " + host + " from the replica set");
                    }
                }
                ensureDataPlaneUser(admin, target);
                return new ReplicaSetState.Converged(target.members());
            }
        } catch (MongoException e) {
            return new ReplicaSetState.Converging("MembersUnreachable",
                    "cannot configure the fast tier yet (" + e.getClass().getSimpleName() + "); the operator retries");
        }
    }

    private static void reconfigure(MongoDatabase admin, Document config, List<Document> members) {
        Document next = new Document(config).append("members", members).append("version", config.getInteger("version") + 1);
        admin.runCommand(new Document("replSetReconfig", next));
    }

    private static void ensureDataPlaneUser(MongoDatabase admin, ReplicaSetTarget target) {
        Document info = admin.runCommand(new Document("usersInfo", target.dataPlaneUser()));
        if (info.getList("users", Document.class).isEmpty()) {
            admin.runCommand(new Document("createUser", target.dataPlaneUser())
                    .append("pwd", target.dataPlanePassword())
                    .append("roles", List.of("readWriteAnyDatabase", "clusterMonitor")));
            LOG.infof("event=data-plane-user-created replicaSet=%s user=%s", target.replicaSetName(), target.dataPlaneUser());
        }
    }

    private MongoClient client(ReplicaSetTarget target, String uri) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .credential(MongoCredential.createCredential(target.rootUser(), "admin", target.rootPassword().toCharArray()))
                .applicationName("thermocline-operator")
                .applyToClusterSettings(c -> c.serverSelectionTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
                .applyToSocketSettings(s -> s.connectTimeout((int) timeout.toMillis(), TimeUnit.MILLISECONDS))
                .build());
    }
}
