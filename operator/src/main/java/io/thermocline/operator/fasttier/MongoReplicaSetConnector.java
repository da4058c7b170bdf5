package io.thermocline.operator.fasttier;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCredential;
import com.mongodb.MongoException;
import com.mongodb.MongoSocketException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import io.thermocline.operator.credentials.FastTierUser;
import io.thermocline.operator.fasttier.tls.FastTierTrust;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.bson.Document;

/**
 * {@link ReplicaSetClient} over the MongoDB sync driver: per-member {@code hello}/{@code buildInfo}
 * without credentials (direct connection), everything else as the root user, through the
 * primary. Short timeouts: a reconcile step never blocks long.
 */
@ApplicationScoped
public class MongoReplicaSetConnector implements ReplicaSetConnector {

    private final Duration timeout;

    public MongoReplicaSetConnector() {
        this(Duration.ofSeconds(5));
    }

    public MongoReplicaSetConnector(Duration timeout) {
        this.timeout = timeout;
    }

    @Override
    public ReplicaSetClient connect(ReplicaSetTarget target) {
        return new Client(target);
    }

    private final class Client implements ReplicaSetClient {
        private final ReplicaSetTarget target;
        private MongoClient set;

        Client(ReplicaSetTarget target) {
            this.target = target;
        }

        @Override
        public MemberView member(String host) {
            try (MongoClient direct = client("mongodb://" + host + "/?directConnection=true", false)) {
                MongoDatabase admin = direct.getDatabase("admin");
                Document hello = admin.runCommand(new Document("hello", 1));
                String version = admin.runCommand(new Document("buildInfo", 1)).getString("version");
                List<String> hosts = new ArrayList<>();
                for (String field : List.of("hosts", "passives", "arbiters")) {
                    hosts.addAll(hello.getList(field, String.class, List.of()));
                }
                MemberView.Role role = hello.getString("setName") == null
                        ? MemberView.Role.UNINITIATED
                        : hello.getBoolean("isWritablePrimary", false)
                                ? MemberView.Role.PRIMARY
                                : hello.getBoolean("secondary", false)
                                        ? MemberView.Role.SECONDARY
                                        : MemberView.Role.OTHER;
                return new MemberView(host, role, version, hosts);
            } catch (MongoException e) {
                return MemberView.unreachable(host);
            }
        }

        @Override
        public void initiate(String host, String replicaSetName) {
            run("replSetInitiate", () -> {
                try (MongoClient direct = client("mongodb://" + host + "/?directConnection=true", true)) {
                    return direct.getDatabase("admin")
                            .runCommand(new Document(
                                    "replSetInitiate",
                                    new Document("_id", replicaSetName)
                                            .append("members", List.of(new Document("_id", 0).append("host", host)))));
                }
            });
        }

        @Override
        public ReplicaSetConfig config() {
            Document config = rawConfig();
            List<ReplicaSetConfig.Member> members = config.getList("members", Document.class).stream()
                    .map(m -> new ReplicaSetConfig.Member(
                            m.getInteger("_id"), m.getString("host"), m.getBoolean("newlyAdded", false)))
                    .toList();
            return new ReplicaSetConfig(config.getInteger("version"), members);
        }

        @Override
        public void reconfigure(ReplicaSetConfig next) {
            Document current = rawConfig();
            List<Document> members = new ArrayList<>();
            for (ReplicaSetConfig.Member m : next.members()) {
                // keep what MongoDB or a person set on an existing member (priority, tags, ...)
                members.add(current.getList("members", Document.class).stream()
                        .filter(d -> d.getInteger("_id") == m.id())
                        .findFirst()
                        .orElse(new Document("_id", m.id()).append("host", m.host())));
            }
            members.forEach(d -> d.remove("newlyAdded")); // set by the server only
            Document config = new Document(current).append("members", members).append("version", next.version());
            run("replSetReconfig", () -> admin().runCommand(new Document("replSetReconfig", config)));
        }

        @Override
        public java.util.Map<String, String> memberStates() {
            Document status = run("replSetGetStatus", () -> admin().runCommand(new Document("replSetGetStatus", 1)));
            java.util.Map<String, String> states = new java.util.HashMap<>();
            for (Document m : status.getList("members", Document.class, List.of())) {
                states.put(m.getString("name"), m.getString("stateStr"));
            }
            return states;
        }

        @Override
        public void stepDown() {
            try {
                admin().runCommand(new Document("replSetStepDown", 60).append("secondaryCatchUpPeriodSecs", 10));
            } catch (MongoException e) {
                // the primary closes connections as it steps down: the next step re-reads the state
                if (!(e instanceof MongoSocketException) && !e.getMessage().contains("not primary")) {
                    throw new Unavailable(
                            "replSetStepDown failed (" + e.getClass().getSimpleName() + ")", e);
                }
            }
        }

        @Override
        public String featureCompatibilityVersion() {
            Document answer = run(
                    "getParameter",
                    () -> admin().runCommand(new Document("getParameter", 1).append("featureCompatibilityVersion", 1)));
            return answer.get("featureCompatibilityVersion", Document.class).getString("version");
        }

        @Override
        public void setFeatureCompatibilityVersion(String majorMinor) {
            Document command = new Document("setFeatureCompatibilityVersion", majorMinor);
            if (Integer.parseInt(majorMinor.substring(0, majorMinor.indexOf('.'))) >= 7) {
                command.append("confirm", true); // required from 7.0 on: FCV changes are hard to undo
            }
            run("setFeatureCompatibilityVersion", () -> admin().runCommand(command));
        }

        @Override
        public void ensureUser(FastTierUser user) {
            run("createUser", () -> {
                if (user.hasCustomRole()) {
                    Document found =
                            admin().runCommand(new Document("rolesInfo", user.name()).append("showPrivileges", true));
                    List<Document> existing = found.getList("roles", Document.class);
                    List<Document> wanted = privileges(user);
                    // only a change is written: every updateRole is a replicated write that invalidates each member's
                    // user cache,
                    // and this runs on every reconcile (each minute); a changed list of tiered collections still
                    // applies at once
                    if (existing.isEmpty()
                            || !samePrivileges(existing.get(0).getList("privileges", Document.class), wanted)) {
                        admin().runCommand(new Document(existing.isEmpty() ? "createRole" : "updateRole", user.name())
                                .append("privileges", wanted)
                                .append("roles", List.of()));
                    }
                }
                List<Document> roles = roles(user);
                Document info = admin().runCommand(new Document("usersInfo", user.name()));
                if (info.getList("users", Document.class).isEmpty()) {
                    admin().runCommand(new Document("createUser", user.name())
                            .append("pwd", user.password())
                            .append("roles", roles));
                } else if (!sameRoles(
                        info.getList("users", Document.class).get(0).getList("roles", Document.class), roles)) {
                    admin().runCommand(new Document("updateUser", user.name()).append("roles", roles));
                }
                return info;
            });
        }

        @Override
        public void close() {
            if (set != null) {
                set.close();
            }
        }

        private static List<Document> roles(FastTierUser user) {
            List<Document> roles = new ArrayList<>();
            for (String role : user.roles()) {
                int at = role.indexOf('@');
                roles.add(new Document("role", role.substring(0, at)).append("db", role.substring(at + 1)));
            }
            if (user.hasCustomRole()) {
                roles.add(new Document("role", user.name()).append("db", "admin"));
            }
            return roles;
        }

        private static List<Document> privileges(FastTierUser user) {
            return user.namespaces().stream()
                    .map(ns -> new Document(
                                    "resource",
                                    new Document("db", ns.substring(0, ns.indexOf('.')))
                                            .append("collection", ns.substring(ns.indexOf('.') + 1)))
                            .append("actions", user.actions()))
                    .toList();
        }

        private static boolean sameRoles(List<Document> actual, List<Document> wanted) {
            Function<Document, String> key = d -> d.getString("role") + "@" + d.getString("db");
            return actual.stream()
                    .map(key)
                    .collect(Collectors.toSet())
                    .equals(wanted.stream().map(key).collect(Collectors.toSet()));
        }

        private Document rawConfig() {
            return run("replSetGetConfig", () -> admin().runCommand(new Document("replSetGetConfig", 1)))
                    .get("config", Document.class);
        }

        private MongoDatabase admin() {
            if (set == null) {
                set = client(
                        "mongodb://" + String.join(",", target.podHosts()) + "/?replicaSet=" + target.replicaSetName(),
                        true);
            }
            return set.getDatabase("admin");
        }

        private <T> T run(String command, Supplier<T> call) {
            try {
                return call.get();
            } catch (MongoException e) {
                throw new Unavailable(command + " failed (" + e.getClass().getSimpleName() + ")", e);
            }
        }

        private MongoClient client(String uri, boolean authenticated) {
            ConnectionString connection = new ConnectionString(uri);
            MongoClientSettings.Builder settings = MongoClientSettings.builder()
                    .applyConnectionString(connection)
                    .applicationName("thermocline-operator")
                    .applyToClusterSettings(c -> c.serverSelectionTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
                    .applyToSocketSettings(s -> s.connectTimeout((int) timeout.toMillis(), TimeUnit.MILLISECONDS)
                            .readTimeout((int) timeout.toMillis() * 4, TimeUnit.MILLISECONDS));
            // TLS once every member accepts it: trusting exactly the fast tier's CAs, host names checked
            FastTierTrust.forHosts(connection.getHosts())
                    .ifPresent(context -> settings.applyToSslSettings(ssl ->
                            ssl.enabled(true).invalidHostNameAllowed(false).context(context)));
            if (authenticated) {
                settings.credential(MongoCredential.createCredential(
                        target.rootUser(), "admin", target.rootPassword().toCharArray()));
            }
            return MongoClients.create(settings.build());
        }
    }

    /** The role's privileges as {@code rolesInfo} shows them equal the wanted ones: the same actions on the same resources. */
    static boolean samePrivileges(List<Document> actual, List<Document> wanted) {
        Function<Document, Map<String, Set<String>>> byResource = d -> Map.of(
                d.get("resource", Document.class).getString("db") + "."
                        + d.get("resource", Document.class).getString("collection"),
                new java.util.TreeSet<>(d.getList("actions", String.class)));
        return actual != null
                && actual.stream()
                        .map(byResource)
                        .collect(Collectors.toSet())
                        .equals(wanted.stream().map(byResource).collect(Collectors.toSet()));
    }
}
