package io.thermocline.embedded.replication;

import java.util.concurrent.TimeUnit;

/**
 * Serializes writes on the primary. Held by an owner (a command, or a transaction from its first
 * write to commit or abort), not by a thread: a transaction's statements arrive on any thread.
 */
public final class WriteLock {
    private Object owner;
    private int holds;

    public synchronized boolean acquire(Object who, long timeout, TimeUnit unit) {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (owner != null && owner != who) {
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return false;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, remaining);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        owner = who;
        holds++;
        return true;
    }

    public synchronized boolean heldBy(Object who) {
        return owner == who;
    }

    public synchronized void release(Object who) {
        if (owner != who) {
            return;
        }
        if (--holds == 0) {
            owner = null;
            notifyAll();
        }
    }

    /** Releases every hold of an owner (an expired or aborted transaction). */
    public synchronized void releaseAll(Object who) {
        if (owner == who) {
            holds = 0;
            owner = null;
            notifyAll();
        }
    }
}
