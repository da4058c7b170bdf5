package io.thermocline.proxy.fleet;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.server.cursors.PeerBusyException;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The authenticated connections to one peer: at most {@code max} open at once, each carrying one
 * request at a time. A borrower beyond the bound waits at most {@code maxWait} for one to come back,
 * then gets {@link PeerBusyException}: the forwarded command never left this replica, so the
 * client may simply retry it. A forwarded awaitData getMore holds its connection while it waits,
 * which is why the bound matters.
 */
final class PeerPool {
    private final InetSocketAddress address;
    private final int max;
    private final Duration maxWait;
    private final EventExecutor timer;
    private final Supplier<CompletableFuture<BackendConnection>> open;

    private final ArrayDeque<BackendConnection> idle = new ArrayDeque<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private int opened;
    private boolean closed;

    private static final class Waiter {
        final CompletableFuture<BackendConnection> future = new CompletableFuture<>();
        ScheduledFuture<?> timeout;
    }

    PeerPool(InetSocketAddress address, int max, Duration maxWait, EventExecutor timer,
             Supplier<CompletableFuture<BackendConnection>> open) {
        if (max < 1) {
            throw new IllegalArgumentException("fleet.peerConnections must be at least 1, got " + max);
        }
        this.address = address;
        this.max = max;
        this.maxWait = maxWait;
        this.timer = timer;
        this.open = open;
    }

    CompletableFuture<BackendConnection> borrow() {
        List<BackendConnection> dead = new ArrayList<>();
        BackendConnection ready = null;
        Waiter waiter = null;
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new PeerBusyException("the peer link to " + address + " is closed"));
            }
            while (ready == null && !idle.isEmpty()) {
                BackendConnection c = idle.pollLast();
                if (c.isOpen()) {
                    ready = c;
                } else {
                    opened--;
                    dead.add(c);
                }
            }
            if (ready == null && opened < max) {
                opened++;
            } else if (ready == null) {
                Waiter w = new Waiter();
                // set before the waiter is visible to giveBack(), which cancels it
                w.timeout = timer.schedule(() -> timeOut(w), maxWait.toMillis(), TimeUnit.MILLISECONDS);
                waiters.add(w);
                waiter = w;
            }
        }
        dead.forEach(BackendConnection::close);
        if (ready != null) {
            return CompletableFuture.completedFuture(ready);
        }
        return waiter != null ? waiter.future : connect();
    }

    /** Back after a clean round trip: to the longest waiter, else idle. */
    void release(BackendConnection c) {
        if (!c.isOpen()) {
            discard(c);
            return;
        }
        Waiter handTo;
        synchronized (this) {
            handTo = closed ? null : waiters.poll();
            if (handTo == null && !closed) {
                idle.addLast(c);
                return;
            }
            if (handTo == null) {
                opened--;
            }
        }
        if (handTo == null) {
            c.close();
            return;
        }
        handTo.timeout.cancel(false);
        if (!handTo.future.complete(c)) {
            release(c);
        }
    }

    /** A connection whose state is unknown (failed mid-request): closed, and its place goes to a waiter. */
    void discard(BackendConnection c) {
        c.close();
        Waiter w;
        synchronized (this) {
            w = closed ? null : waiters.poll();
            if (w == null) {
                opened--;
                return;
            }
        }
        w.timeout.cancel(false);
        connect().whenComplete((fresh, e) -> {
            if (e != null) {
                w.future.completeExceptionally(e);
            } else if (!w.future.complete(fresh)) {
                release(fresh);
            }
        });
    }

    /** A failed connect fails every waiter at once: a peer that refuses one connection is down for all of them. */
    private CompletableFuture<BackendConnection> connect() {
        return open.get().whenComplete((c, e) -> {
            if (e == null) {
                return;
            }
            List<Waiter> failed;
            synchronized (this) {
                opened--;
                failed = new ArrayList<>(waiters);
                waiters.clear();
            }
            failed.forEach(w -> {
                w.timeout.cancel(false);
                w.future.completeExceptionally(e);
            });
        });
    }

    private void timeOut(Waiter w) {
        boolean removed;
        synchronized (this) {
            removed = waiters.remove(w);
        }
        if (removed) {
            w.future.completeExceptionally(new PeerBusyException("all " + max + " peer connections to " + address
                    + " stayed busy for " + maxWait.toMillis() + " ms (fleet.peerConnections); the cursor is"
                    + " untouched, retry the command"));
        }
    }

    synchronized int open() {
        return opened;
    }

    void close() {
        List<BackendConnection> toClose;
        List<Waiter> failed;
        synchronized (this) {
            closed = true;
            toClose = new ArrayList<>(idle);
            opened -= idle.size();
            idle.clear();
            failed = new ArrayList<>(waiters);
            waiters.clear();
        }
        toClose.forEach(BackendConnection::close);
        failed.forEach(w -> {
            w.timeout.cancel(false);
            w.future.completeExceptionally(new PeerBusyException("the peer link to " + address + " closed"));
        });
    }
}
