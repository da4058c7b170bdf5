package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.OplogEntry;
import io.thermocline.embedded.storage.MemberStore;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the oplog to one secondary, in order, as idempotent writes (upsert of the post-image,
 * delete by _id), each entry no earlier than its wall time plus the set's replication lag.
 * Sleeps on the progress signal while there is nothing to do.
 */
public final class SecondaryApplier implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(SecondaryApplier.class);
    private static final long IDLE_WAIT_MILLIS = 10_000;

    private final ReplicationCoordinator coordinator;
    private final MemberState member;
    private volatile boolean running = true;
    private Thread thread;

    public SecondaryApplier(ReplicationCoordinator coordinator, MemberState member) {
        this.coordinator = coordinator;
        this.member = member;
    }

    public void start(String name) {
        thread = new Thread(this, name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Stops applying and waits up to {@code wait} for an entry being applied: the set closes this member's store next,
     * and a write still walking it then broke H2's close ({@code AssertionError: N != N+1} in {@code MVStore.closeStore},
     * seen under load, when this waited 5 s). Not interrupted: an interrupt inside H2's file I/O closes the store's file.
     *
     * @return whether the applier has stopped
     */
    public boolean stop(java.time.Duration wait) {
        running = false;
        coordinator.progress().signalAll();
        if (thread != null) {
            try {
                thread.join(wait.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return !thread.isAlive();
        }
        return true;
    }

    @Override
    public void run() {
        while (running) {
            try {
                step();
            } catch (RuntimeException e) {
                log.error(
                        "event=applyFailed member={} applied={} error={}",
                        member.index(),
                        member.applied(),
                        e.toString());
                coordinator.progress().await(() -> !running, 1, TimeUnit.SECONDS);
            }
        }
    }

    private boolean canApply() {
        return member.alive() && !member.paused() && !coordinator.isPrimary(member);
    }

    private void step() {
        if (!canApply()) {
            coordinator.progress().await(() -> !running || canApply(), IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
            return;
        }
        Optional<OplogEntry> next = coordinator.oplog().next(member.applied());
        if (next.isEmpty()) {
            coordinator
                    .progress()
                    .await(
                            () -> !running
                                    || !canApply()
                                    || coordinator.oplog().last().isAfter(member.applied()),
                            IDLE_WAIT_MILLIS,
                            TimeUnit.MILLISECONDS);
            return;
        }
        OplogEntry entry = next.get();
        long due = entry.wallTimeMillis() + coordinator.lag().toMillis();
        long wait = due - System.currentTimeMillis();
        if (wait > 0) {
            long lagNow = coordinator.lag().toMillis();
            coordinator
                    .progress()
                    .await(
                            () -> !running || !canApply() || coordinator.lag().toMillis() != lagNow,
                            wait,
                            TimeUnit.MILLISECONDS);
            return;
        }
        // marked before storage changes: a read that sees the entry's writes reports a time covering them
        member.applying(entry.position());
        apply(member.store(), entry);
        while (running && member.heldMidEntry()) {
            coordinator
                    .progress()
                    .await(() -> !running || !member.heldMidEntry(), IDLE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        }
        coordinator.applied(member, entry);
    }

    /** Applies one entry to a store; idempotent, so replaying after a crash is safe. */
    public static void apply(MemberStore store, OplogEntry entry) {
        String db = entry.database();
        String coll = entry.collection();
        switch (entry.operation()) {
            case INSERT, UPDATE, REPLACE -> store.upsert(db, coll, entry.document());
            case DELETE -> store.deleteById(db, coll, entry.documentKey().get("_id"));
            case DROP -> store.dropCollection(db, coll);
            case DROP_DATABASE -> store.dropDatabase(db);
            case RENAME ->
                store.command(
                        "admin",
                        new BsonDocument("renameCollection", new BsonString(entry.namespace()))
                                .append("to", entry.document().get("to"))
                                .append("dropTarget", BsonBoolean.TRUE));
            case COMMAND -> {
                BsonDocument command = entry.document();
                if (!command.containsKey("noop")) {
                    store.command(db, command);
                }
            }
        }
    }
}
