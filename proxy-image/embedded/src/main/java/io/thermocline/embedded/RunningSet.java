package io.thermocline.embedded;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.thermocline.embedded.member.Member;
import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.HybridClock;
import io.thermocline.embedded.oplog.Operation;
import io.thermocline.embedded.oplog.Oplog;
import io.thermocline.embedded.oplog.OplogEntry;
import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.oplog.OplogStore;
import io.thermocline.embedded.oplog.ProgressSignal;
import io.thermocline.embedded.replication.Durability;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.replication.SecondaryApplier;
import io.thermocline.embedded.security.MemberSecurity;
import io.thermocline.embedded.security.UserRegistry;
import io.thermocline.embedded.session.SessionCatalog;
import io.thermocline.embedded.session.Transaction;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.embedded.storage.Storage;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The parts of a started replica set: its members and their appliers, the coordinator, the sessions, the oplog (and its
 * store on disk), the event loops and the housekeeping thread. {@link EmbeddedReplicaSet#start} opens them and
 * {@link EmbeddedReplicaSet#close} stops them.
 */
final class RunningSet {
    private static final Logger log = LoggerFactory.getLogger(RunningSet.class);
    /** The longest a stop waits for what is still running in the stores; each stops at once when woken. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(30);

    private final EmbeddedReplicaSet.Builder config;
    private final Storage storage;
    private final UserRegistry users;
    private final List<Member> members = new ArrayList<>();
    private final List<SecondaryApplier> appliers = new ArrayList<>();
    private final List<MemberStore> opened = new ArrayList<>();
    private ReplicationCoordinator coordinator;
    private SessionCatalog sessions;
    private Oplog oplog;
    private EventLoopGroup group;
    private ScheduledExecutorService housekeeping;
    private OplogStore oplogStore;
    private MemberSecurity security;

    RunningSet(EmbeddedReplicaSet.Builder config, Storage storage, UserRegistry users) {
        this.config = config;
        this.storage = storage;
        this.users = users;
    }

    ReplicationCoordinator coordinator() {
        return coordinator;
    }

    Oplog oplog() {
        return oplog;
    }

    List<Member> members() {
        return members;
    }

    /** Opens the set: its storage and oplog (replaying what an on-disk restart needs), members, appliers, housekeeping. */
    void open() {
        ProgressSignal progress = new ProgressSignal();
        if (storage instanceof Storage.Directory dir) {
            oplogStore = new OplogStore(dir);
        }
        oplog = new Oplog(config.oplogSize, progress, oplogStore);
        HybridClock clock = new HybridClock(Clock.systemUTC());
        clock.advanceTo(oplog.last().clusterTime());
        List<MemberState> states = new ArrayList<>();
        for (int i = 0; i < config.members; i++) {
            MemberStore store = MemberStore.open(storage, "member" + i);
            opened.add(store);
            states.add(new MemberState(i, store));
        }
        long term = oplog.lastEntry().map(OplogEntry::term).orElse(0L);
        coordinator = new ReplicationCoordinator(config.name, states, clock, oplog, progress, term);
        coordinator.lag(config.replicationLag);
        if (storage instanceof Storage.Directory dir) {
            Durability durability =
                    Durability.onDisk(config.name, dir.path().toAbsolutePath().toString(), this::flush);
            coordinator.durability(durability);
            opened.forEach(store -> store.onDiskFailure(durability::refuse));
            oplogStore.onDiskFailure(durability::refuse);
        }
        coordinator.replicaSetTopology().electionTimeout(config.electionTimeout);
        recover(states);
        sessions = new SessionCatalog(config.transactionLifetime);
        coordinator.onPrimaryChange(this::primaryChanged);
        group = new MultiThreadIoEventLoopGroup(Math.min(2, config.members + 1), NioIoHandler.newFactory());
        for (EmbeddedReplicaSet.Builder.SeedUser u : config.users) {
            if (users.find(u.name()).join().isEmpty()) {
                users.create(u.name(), u.password().toCharArray(), u.roles());
            }
        }
        security = new MemberSecurity(
                users, config.requireAuthentication, config.tls == null ? null : config.tls.context());
        for (MemberState state : states) {
            int port = config.ports.isEmpty() ? 0 : config.ports.get(state.index());
            Member member = new Member(
                    coordinator,
                    state,
                    sessions,
                    group,
                    port,
                    config.majorityWriteConcernByDefault,
                    config.name + "-m" + state.index(),
                    security);
            member.bind();
            members.add(member);
        }
        for (MemberState state : states) {
            SecondaryApplier applier = new SecondaryApplier(coordinator, state);
            applier.start(config.name + "-m" + state.index() + "-applier");
            appliers.add(applier);
        }
        coordinator.replicaSetTopology().startedAll(states);
        if (oplog.lastEntry().isEmpty()) {
            initiate();
        }
        housekeeping = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, config.name + "-housekeeping");
            t.setDaemon(true);
            return t;
        });
        housekeeping.scheduleWithFixedDelay(this::housekeeping, 1, 1, TimeUnit.SECONDS);
    }

    /** On-disk restart: replays what each member had not durably applied (entries are idempotent). */
    private void recover(List<MemberState> states) {
        for (MemberState state : states) {
            OplogPosition from = oplogStore == null ? null : oplogStore.applied(state.index());
            if (from == null) {
                from = oplog.trimmedThrough();
            }
            OplogPosition position = from;
            for (List<OplogEntry> batch = oplog.after(position, oplog.last(), 1000);
                    !batch.isEmpty();
                    batch = oplog.after(position, oplog.last(), 1000)) {
                for (OplogEntry entry : batch) {
                    SecondaryApplier.apply(state.store(), entry);
                    position = entry.position();
                }
            }
            coordinator.initialSync().restoreApplied(state, oplog.last());
        }
    }

    /** The first oplog entry, as replSetInitiate writes one: operationTime is never zero. */
    private void initiate() {
        MemberState primary = coordinator.primary().orElseThrow();
        Object owner = new Object();
        coordinator.writeLock().acquire(owner, 1, TimeUnit.MINUTES);
        try {
            coordinator.commit(
                    primary,
                    List.of(new Change(
                            Operation.COMMAND,
                            "admin",
                            null,
                            null,
                            new BsonDocument("noop", new BsonString("initiating set")),
                            null,
                            null)),
                    null,
                    null,
                    false);
        } finally {
            coordinator.writeLock().releaseAll(owner);
        }
    }

    private void primaryChanged(int newPrimary) {
        for (Transaction t : sessions.openTransactions()) {
            if (t.primaryIndex() != newPrimary) {
                sessions.abort(t, coordinator.members().get(t.primaryIndex()).store());
            }
        }
        coordinator.progress().signalAll();
        if (newPrimary >= 0) {
            sessions.forgetAfter(coordinator.members().get(newPrimary).applied());
        }
    }

    private void housekeeping() {
        try {
            long now = System.currentTimeMillis();
            for (Transaction t : sessions.openTransactions()) {
                if (now > t.deadlineMillis()) {
                    log.info("event=transactionExpired set={} txnNumber={}", config.name, t.txnNumber());
                    Object owner = new Object();
                    coordinator.writeLock().acquire(owner, 1, TimeUnit.MINUTES);
                    try {
                        sessions.abort(
                                t, coordinator.members().get(t.primaryIndex()).store());
                    } finally {
                        coordinator.writeLock().release(owner);
                    }
                    coordinator.progress().signalAll();
                }
            }
            coordinator.durability().flushNow();
        } catch (RuntimeException e) {
            log.warn("event=housekeepingFailed set={} error={}", config.name, e.toString());
        }
    }

    private void flush() {
        if (oplogStore == null) {
            return;
        }
        for (MemberState state : coordinator.members()) {
            state.store().commit();
        }
        for (MemberState state : coordinator.members()) {
            oplogStore.saveApplied(state.index(), state.applied());
        }
        oplog.flush();
    }

    /**
     * Waits until housekeeping and the members' commands have returned: the stores close only once nothing runs in
     * them. A query still walking a tree when H2 closes its store fails the close ({@code AssertionError: N != N+1} in
     * {@code MVStore.closeStore}, seen on loaded machines when a client's last request was still running).
     */
    private void awaitStopped() {
        try {
            // its flush ends by itself; an abort of an expired transaction may wait for the write lock (up to a
            // minute): interrupted after a while
            if (housekeeping != null && !housekeeping.awaitTermination(10, TimeUnit.SECONDS)) {
                housekeeping.shutdownNow();
                if (!housekeeping.awaitTermination(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    log.warn("event=housekeepingStillRunning set={} waited={}", config.name, STOP_WAIT);
                }
            }
            for (Member member : members) {
                if (!member.awaitCommandsEnded(STOP_WAIT)) {
                    log.warn(
                            "event=commandsStillRunning set={} member={} waited={}",
                            config.name,
                            member.index(),
                            STOP_WAIT);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops what {@link #open} started, in order; a part it never opened is skipped. */
    void close() {
        if (housekeeping != null) {
            housekeeping.shutdown(); // not interrupted: an interrupt inside H2's file I/O closes the store's file
        }
        for (SecondaryApplier applier : appliers) {
            if (!applier.stop(STOP_WAIT)) {
                log.warn("event=applierStillRunning set={} waited={}", config.name, STOP_WAIT);
            }
        }
        members.forEach(Member::shutdown);
        awaitStopped();
        if (coordinator != null) {
            coordinator.replicaSetTopology().close();
            try {
                coordinator.durability().flushNow();
            } catch (RuntimeException e) {
                log.warn("event=finalFlushFailed set={} error=\"{}\"", config.name, e.getMessage());
            }
        }
        for (MemberStore store : opened) {
            try {
                store.close();
            } catch (RuntimeException e) {
                // a store the disk refused is closed by H2 already: what it could not write was never acknowledged
                log.warn("event=storeCloseFailed set={} error=\"{}\"", config.name, e.toString());
            }
        }
        try {
            if (oplog != null) {
                oplog.close();
            } else if (oplogStore != null) {
                oplogStore.close();
            }
        } catch (RuntimeException e) {
            log.warn("event=oplogCloseFailed set={} error=\"{}\"", config.name, e.toString());
        }
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
