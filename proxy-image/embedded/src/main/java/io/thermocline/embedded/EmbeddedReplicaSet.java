package io.thermocline.embedded;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.thermocline.embedded.member.Member;
import io.thermocline.embedded.security.UserRegistry;
import io.thermocline.embedded.storage.Storage;
import io.thermocline.security.UserName;
import io.thermocline.security.roles.RoleName;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.net.ssl.SSLException;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A MongoDB replica set in this JVM, for tests and the embedded default: N members on 127.0.0.1
 * that the official drivers discover and use as a MongoDB 6.0 replica set (oplog, cluster time,
 * majority writes, lagging secondaries, failover, sessions, transactions, change streams).
 * Storage and queries come from mongo-java-server. Not a production database.
 *
 * <pre>{@code
 * try (EmbeddedReplicaSet rs = EmbeddedReplicaSet.builder().members(3).build().start()) {
 *     MongoClient client = MongoClients.create(rs.connectionString());
 * }
 * }</pre>
 */
public final class EmbeddedReplicaSet implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedReplicaSet.class);

    private final Builder config;
    private final Storage storage;
    private boolean started;
    private final UserRegistry users = new UserRegistry();
    private final RunningSet running;

    private EmbeddedReplicaSet(Builder config) {
        this.config = config;
        this.storage = config.storage != null ? config.storage : Storage.unspecified();
        this.running = new RunningSet(config, storage, users);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** One in-memory member named rs0: the cheapest set, for tests that need replica-set semantics. */
    public static EmbeddedReplicaSet startSingle() {
        return builder().build().start();
    }

    public synchronized EmbeddedReplicaSet start() {
        if (started) {
            throw new IllegalStateException("replica set " + config.name + " is already started");
        }
        started = true;
        try {
            running.open();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        log.info("event=replicaSetStarted set={} members={} uri={}", config.name, config.members, connectionString());
        return this;
    }

    /** Why the set refuses writes (its storage directory refused a flush: disk full, read-only), if it does. */
    public java.util.Optional<String> writesRefused() {
        return running.coordinator() == null
                ? java.util.Optional.empty()
                : running.coordinator().durability().refusal();
    }

    /** mongodb://127.0.0.1:p1,127.0.0.1:p2,.../?replicaSet=name */
    public String connectionString() {
        return "mongodb://" + running.members().stream().map(Member::host).collect(Collectors.joining(","))
                + "/?replicaSet=" + config.name + (config.tls != null ? "&tls=true" : "");
    }

    public String name() {
        return config.name;
    }

    public List<Member> members() {
        return List.copyOf(running.members());
    }

    public Member member(int index) {
        return running.members().get(index);
    }

    /** The current primary; fails when the set has none (a majority of members is down). */
    public Member primary() {
        return findPrimary()
                .orElseThrow(() -> new IllegalStateException(
                        "replica set " + config.name + " has no primary: a majority of its members is down"));
    }

    public Optional<Member> findPrimary() {
        return running.coordinator().primary().map(s -> running.members().get(s.index()));
    }

    public List<Member> secondaries() {
        return running.members().stream()
                .filter(m -> m.isAlive() && !m.isPrimary())
                .toList();
    }

    /** replSetStepDown: the primary steps down once a secondary caught up; another member is elected. */
    public Member stepDown() {
        running.coordinator().replicaSetTopology().stepDown(Duration.ofSeconds(10));
        return primary();
    }

    /** Crashes a member: its port and connections close; a killed primary is replaced by election. */
    public void kill(Member member) {
        member.unbind();
        running.coordinator().replicaSetTopology().stopped(member.state());
        log.info("event=memberKilled set={} member={}", config.name, member.index());
    }

    /**
     * Restarts a killed member (on a fresh ephemeral port unless ports were configured, so it never
     * races other sockets for its old one; {@link #connectionString()} and {@code hello.hosts} name
     * the new one); a member that missed history or holds rolled-back writes resyncs.
     */
    public void restart(Member member) {
        if (member.isAlive()) {
            throw new IllegalStateException("member " + member.host() + " is running; kill it before restarting it");
        }
        if (running.coordinator().initialSync().needsResync(member.state())) {
            running.coordinator().initialSync().resync(member.state());
        }
        member.bind();
        running.coordinator().replicaSetTopology().started(member.state());
        log.info("event=memberRestarted set={} member={}", config.name, member.index());
    }

    public void pauseReplication(Member member) {
        running.coordinator().replicaSetTopology().paused(member.state(), true);
    }

    public void resumeReplication(Member member) {
        running.coordinator().replicaSetTopology().paused(member.state(), false);
    }

    /**
     * Holds a secondary's applier after it wrote its next entry to storage and before it records the entry
     * applied (false: lets it go on): the moment a read of the member may see the entry's writes while the
     * member's applied point is still the previous entry, as a mongod's secondary is in the middle of a batch.
     */
    public void holdApplyingMidEntry(Member member, boolean hold) {
        running.coordinator().replicaSetTopology().heldMidEntry(member.state(), hold);
    }

    /**
     * Holds the primary's writes after they changed storage and before their oplog entry is stamped (false: lets
     * them go): the moment a read of the primary may see a write whose time is not yet its newest entry's.
     */
    public void holdWritesBeforeTheirOplogEntry(Member member, boolean hold) {
        running.coordinator().holds().heldBeforeOplog(member.state(), hold);
    }

    /**
     * Lets the primary's next {@code documents} document writes begin and holds the ones after before they change
     * storage (negative: lets them all go): a multi-document statement stopped between two of its documents.
     */
    public void holdWritesAfterDocuments(Member member, int documents) {
        running.coordinator().holds().writeStepsAllowed(member.state(), documents);
    }

    /** How many document writes have waited at {@link #holdWritesAfterDocuments}'s hold. */
    public long documentWritesHeld() {
        return running.coordinator().holds().heldSteps();
    }

    /** How many writes have reached {@link #holdWritesBeforeTheirOplogEntry}'s hold (a test waits for its own). */
    public long writesHeldBeforeTheirOplogEntry() {
        return running.coordinator().holds().heldWrites();
    }

    /** How many writes outside transactions waited for an open transaction holding their documents or unique keys. */
    public long writesThatWaitedForATransaction() {
        return running.coordinator().writesWaitingForTransactions();
    }

    /** How many majority reads with {@code afterClusterTime} waited for a majority to apply that time. */
    public long majorityReadsThatWaited() {
        return running.coordinator().waits().readsWaitingForMajority();
    }

    /** How many reads ran while a write was between storage and its oplog entry, and waited for its stamp. */
    public long readsThatWaitedForAStamp() {
        return running.coordinator().inFlight().readsWaitingForAStamp();
    }

    /**
     * Holds the next request of {@code command} on its way to {@code member}, as a slow network would: it runs once
     * released, even if its client gave up meanwhile (a request delivered after the driver's timeout).
     */
    public io.thermocline.embedded.member.DelayedRequests.Held delayNextRequest(Member member, String command) {
        return member.delayedRequests().holdNext(command);
    }

    /** Secondaries apply each entry no earlier than this long after the primary wrote it. */
    public void setReplicationLag(Duration lag) {
        running.coordinator().lag(lag);
    }

    /** Waits until every running, unpaused member has applied the whole oplog. */
    public boolean awaitReplication(Duration timeout) {
        return running.coordinator()
                .progress()
                .await(
                        () -> running.coordinator().members().stream()
                                .filter(m -> m.alive() && !m.paused())
                                .allMatch(m -> !running.oplog().last().isAfter(m.applied())),
                        timeout.toMillis(),
                        TimeUnit.MILLISECONDS);
    }

    /** The cluster time of the newest oplog entry. */
    public BsonTimestamp lastOperationTime() {
        return running.oplog().last().clusterTime();
    }

    public int oplogSize() {
        return running.oplog().size();
    }

    @Override
    public synchronized void close() {
        if (!started) {
            return;
        }
        started = false;
        running.close();
        log.info("event=replicaSetClosed set={}", config.name);
    }

    /** The set's users (SCRAM credentials and roles); see docs/embedded-replica-set.md, "Users and authentication". */
    public UserRegistry users() {
        return users;
    }

    /** How to build a replica set; every setting has a default suited to tests. */
    public static final class Builder {
        record SeedUser(UserName name, String password, List<RoleName> roles) {}

        boolean requireAuthentication;
        TlsFiles tls;

        /** The members' certificate chain and PKCS#8 key (PEM). */
        record TlsFiles(Path certificate, Path key) {
            SslContext context() {
                try {
                    return SslContextBuilder.forServer(certificate.toFile(), key.toFile())
                            .protocols("TLSv1.3", "TLSv1.2")
                            .build();
                } catch (SSLException e) {
                    throw new IllegalArgumentException(
                            "tls: cannot use " + certificate + " / " + key + ": " + e.getMessage(), e);
                }
            }
        }

        final List<SeedUser> users = new ArrayList<>();
        String name = "rs0";
        int members = 1;
        Storage storage; // null: Storage.unspecified(), chosen when the set is built
        List<Integer> ports = List.of();
        int oplogSize = 100_000;
        Duration replicationLag = Duration.ZERO;
        Duration transactionLifetime = Duration.ofSeconds(60);
        boolean majorityWriteConcernByDefault = true;
        Duration electionTimeout = Duration.ZERO;

        public Builder name(String value) {
            if (value == null || value.isBlank() || value.contains("/") || value.contains(",")) {
                throw new IllegalArgumentException("replica set name must be a non-empty word, got '" + value + "'");
            }
            name = value;
            return this;
        }

        public Builder members(int value) {
            if (value < 1 || value > 7) {
                throw new IllegalArgumentException("a replica set here has 1 to 7 members, got " + value);
            }
            members = value;
            return this;
        }

        public Builder storage(Storage value) {
            storage = value;
            return this;
        }

        /** Fixed ports, one per member (default: ephemeral ports chosen at start). */
        public Builder ports(List<Integer> value) {
            ports = List.copyOf(value);
            return this;
        }

        /** How many entries the oplog keeps; older ones fall off (resuming before them fails with code 286). */
        public Builder oplogSize(int entries) {
            if (entries < 1) {
                throw new IllegalArgumentException("oplog size must be at least 1 entry, got " + entries);
            }
            oplogSize = entries;
            return this;
        }

        public Builder replicationLag(Duration value) {
            replicationLag = value;
            return this;
        }

        /** Open transactions older than this are aborted (MongoDB's transactionLifetimeLimitSeconds). */
        public Builder transactionLifetime(Duration value) {
            transactionLifetime = value;
            return this;
        }

        /**
         * How long a set whose primary died stays without one before electing another (MongoDB's
         * electionTimeoutMillis, 10 s by default there). Default zero: elections are instant.
         */
        public Builder electionTimeout(Duration value) {
            if (value.isNegative()) {
                throw new IllegalArgumentException("election timeout must not be negative, got " + value);
            }
            electionTimeout = value;
            return this;
        }

        /** MongoDB 5.0+ acknowledges writes without a writeConcern only once a majority applied them. */
        public Builder majorityWriteConcernByDefault(boolean value) {
            majorityWriteConcernByDefault = value;
            return this;
        }

        /** As mongod's {@code --tlsMode requireTLS}: every member serves TLS only, with this PEM chain and PKCS#8 key. */
        public Builder tls(Path certificate, Path key) {
            tls = new TlsFiles(certificate, key);
            return this;
        }

        /** As mongod's {@code --auth}: every command but the handshake and SCRAM needs a login (error 13). */
        public Builder requireAuthentication(boolean value) {
            requireAuthentication = value;
            return this;
        }

        /**
         * A user in {@code admin} with SCRAM-SHA-256 and SCRAM-SHA-1 credentials; roles are
         * {@code "root"} (a role of admin) or {@code "readWrite@shop"}.
         */
        public Builder user(String name, String password, String... roles) {
            List<RoleName> granted = new ArrayList<>();
            for (String r : roles) {
                int at = r.indexOf('@');
                granted.add(at < 0 ? new RoleName(r, "admin") : new RoleName(r.substring(0, at), r.substring(at + 1)));
            }
            users.add(new SeedUser(new UserName(name, "admin"), password, granted));
            return this;
        }

        public EmbeddedReplicaSet build() {
            if (!ports.isEmpty() && ports.size() != members) {
                throw new IllegalArgumentException(
                        "ports: " + ports.size() + " given for " + members + " members; give one per member or none");
            }
            return new EmbeddedReplicaSet(this);
        }
    }
}
