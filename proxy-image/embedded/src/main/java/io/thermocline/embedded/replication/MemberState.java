package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.storage.MemberStore;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.types.ObjectId;

/** What the replica set knows about one member: its storage, how far it applied the oplog, whether it runs. */
public final class MemberState {
    private final int index;
    private final MemberStore store;
    private volatile String host;
    private volatile OplogPosition applied = OplogPosition.ORIGIN;
    /** The newest entry whose writes a read may see: the one being applied, else {@link #applied}. */
    private volatile OplogPosition visible = OplogPosition.ORIGIN;

    private volatile long appliedWallMillis;
    private volatile boolean alive;
    private volatile boolean paused;
    private volatile boolean heldMidEntry;
    private volatile boolean heldBeforeOplog;
    /** Writes of this member (as primary) begun and ended: storage changes before its oplog entry is stamped. */
    private final java.util.concurrent.atomic.AtomicLong writesBegun = new java.util.concurrent.atomic.AtomicLong();

    private final java.util.concurrent.atomic.AtomicLong writesEnded = new java.util.concurrent.atomic.AtomicLong();
    private volatile ObjectId processId = new ObjectId();
    private final AtomicLong topologyCounter = new AtomicLong();

    public MemberState(int index, MemberStore store) {
        this.index = index;
        this.store = store;
    }

    public int index() {
        return index;
    }

    public MemberStore store() {
        return store;
    }

    public String host() {
        return host;
    }

    public void host(String hostAndPort) {
        this.host = hostAndPort;
    }

    public OplogPosition applied() {
        return applied;
    }

    public long appliedWallMillis() {
        return appliedWallMillis;
    }

    void applied(OplogPosition position, long wallMillis) {
        this.applied = position;
        this.visible = position;
        this.appliedWallMillis = wallMillis;
    }

    /**
     * The newest entry whose writes a read of this member may see: a secondary's applier marks an entry
     * before its writes reach storage, so a read that saw them reports a time that covers them.
     */
    public OplogPosition visible() {
        return visible;
    }

    void applying(OplogPosition position) {
        this.visible = position;
    }

    public boolean alive() {
        return alive;
    }

    /** Set once the member's process stops: a multi-document statement ends before its next document. */
    private volatile boolean stopping;

    public void stopping() {
        this.stopping = true;
    }

    public boolean isStopping() {
        return stopping;
    }

    void alive(boolean value) {
        this.alive = value;
    }

    public boolean paused() {
        return paused;
    }

    void paused(boolean value) {
        this.paused = value;
    }

    /** Whether the applier stops after writing an entry to storage, before recording it applied (a test's fail point). */
    public boolean heldMidEntry() {
        return heldMidEntry;
    }

    void heldMidEntry(boolean value) {
        this.heldMidEntry = value;
    }

    public ObjectId processId() {
        return processId;
    }

    /** A restarted process gets a new processId, as a real mongod does. */
    void newProcess() {
        stopping = false;
        processId = new ObjectId();
        topologyCounter.set(0);
    }

    public long topologyCounter() {
        return topologyCounter.get();
    }

    void topologyChanged() {
        topologyCounter.incrementAndGet();
    }

    /**
     * Runs one write statement of the primary: its storage change and then its oplog entry. A read may see the
     * change before the entry is stamped; {@link #writesBegun()} and {@link #writesEnded()} let it wait for the entry.
     */
    public <T> T writing(java.util.function.Supplier<T> statement) {
        writesBegun.incrementAndGet();
        try {
            return statement.get();
        } finally {
            writesEnded.incrementAndGet();
        }
    }

    public long writesBegun() {
        return writesBegun.get();
    }

    public long writesEnded() {
        return writesEnded.get();
    }

    /** Test hook: the primary's writes wait after changing storage and before their oplog entry. */
    public boolean heldBeforeOplog() {
        return heldBeforeOplog;
    }

    void heldBeforeOplog(boolean value) {
        this.heldBeforeOplog = value;
    }

    /** Test hook: how many more write steps may begin (negative: any number). */
    private final java.util.concurrent.atomic.AtomicInteger stepsAllowed =
            new java.util.concurrent.atomic.AtomicInteger(-1);

    void stepsAllowed(int steps) {
        stepsAllowed.set(steps);
    }

    /** Takes one step of the allowance; false when none is left (the step waits). */
    boolean takeStep() {
        while (true) {
            int left = stepsAllowed.get();
            if (left < 0) {
                return true;
            }
            if (left == 0) {
                return false;
            }
            if (stepsAllowed.compareAndSet(left, left - 1)) {
                return true;
            }
        }
    }
}
