package io.thermocline.embedded.oplog;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * Wakes waiters (change streams, secondaries, majority writers, afterClusterTime readers, streaming
 * hello) when something they wait for may have happened. Waiters sleep on a condition: no polling.
 */
public final class ProgressSignal {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    public void signalAll() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until the condition holds or the timeout passes; returns whether it holds. */
    public boolean await(BooleanSupplier condition, long timeout, TimeUnit unit) {
        long remaining = unit.toNanos(timeout);
        lock.lock();
        try {
            while (!condition.getAsBoolean()) {
                if (remaining <= 0) {
                    return false;
                }
                remaining = changed.awaitNanos(remaining);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return condition.getAsBoolean();
        } finally {
            lock.unlock();
        }
    }
}
