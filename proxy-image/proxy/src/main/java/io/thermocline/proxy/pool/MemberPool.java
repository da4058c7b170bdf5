package io.thermocline.proxy.pool;

import com.mongodb.ServerAddress;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.Compressor;
import io.thermocline.wire.OpMsg;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * A bounded pool of connections to one member of one tier. Borrowers wait at most
 * {@code maxWait} for a free connection; a failed connect fails every waiter at once, since a
 * backend that refuses one connection is down for all of them.
 */
public final class MemberPool implements PoolListener.PoolCounts {
    private final Tier tier;
    private final ServerAddress address;
    /** This replica's share of the tier's budget; the fleet changes it as replicas come and go ({@link #resize}). */
    private volatile int maxSize;
    private final Duration maxWait;
    private final BackendConnector connector;
    private final EventExecutor timer;
    private final PoolListener.BorrowRecorder listener;
    private final List<Compressor> compressors;

    private final ArrayDeque<BackendConnection> idle = new ArrayDeque<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    // Written under the pool's lock, read without it by metrics.
    private volatile int open;
    private volatile int inUse;
    private volatile int waiting;
    private long generation;
    private final TierLogin login;
    private boolean closed;

    private static final class Waiter {
        final CompletableFuture<BackendConnection> future = new CompletableFuture<>();
        final long startNanos = System.nanoTime();
        ScheduledFuture<?> timeout;
    }

    public MemberPool(Tier tier, ServerAddress address, int maxSize, Duration maxWait, BackendConnector connector,
                      EventExecutor timer, PoolListener listener) {
        this(tier, address, maxSize, maxWait, connector, timer, listener, List.of());
    }

    /** {@code compressors}: offered to the member in each connection's handshake, in order of preference. */
    public MemberPool(Tier tier, ServerAddress address, int maxSize, Duration maxWait, BackendConnector connector,
                      EventExecutor timer, PoolListener listener, List<Compressor> compressors) {
        this(tier, address, maxSize, maxWait, connector, timer, listener, compressors, TierLogin.none());
    }

    /** {@code login}: the data plane's SCRAM login on each new connection, after the handshake. */
    public MemberPool(Tier tier, ServerAddress address, int maxSize, Duration maxWait, BackendConnector connector,
                      EventExecutor timer, PoolListener listener, List<Compressor> compressors, TierLogin login) {
        this.login = login;
        this.compressors = List.copyOf(compressors);
        if (maxSize < 1) {
            throw new IllegalArgumentException("pool size must be at least 1, got " + maxSize);
        }
        this.tier = tier;
        this.address = address;
        this.maxSize = maxSize;
        this.maxWait = maxWait;
        this.connector = connector;
        this.timer = timer;
        this.listener = listener.poolCreated(tier, address, this);
    }

    @Override
    public int open() {
        return open;
    }

    @Override
    public int inUse() {
        return inUse;
    }

    @Override
    public int waiters() {
        return waiting;
    }

    public ServerAddress address() {
        return address;
    }

    /** The most connections this pool may open now. */
    public int limit() {
        return maxSize;
    }

    /**
     * A new limit (zero allowed: borrowers then wait for the fleet to grant a share). Shrinking closes
     * idle connections above it at once and busy ones as they come back, so {@link #open()} falls to
     * the limit within one round trip; growing serves waiters with new connections.
     */
    public void resize(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("pool size must not be negative, got " + limit);
        }
        List<BackendConnection> surplus = new ArrayList<>();
        synchronized (this) {
            maxSize = limit;
            while (open > maxSize && !idle.isEmpty()) {
                surplus.add(idle.pollFirst());
                open--;
            }
        }
        surplus.forEach(BackendConnection::close);
        while (replaceForWaiter()) {
            // one new connection per waiter, until the limit or no one waits
        }
    }

    public CompletableFuture<BackendConnection> borrow() {
        return borrow(null);
    }

    /** Borrows a connection, preferring one on {@code preferred} (the caller's event loop). */
    public CompletableFuture<BackendConnection> borrow(EventLoop preferred) {
        long start = System.nanoTime();
        List<BackendConnection> stale = null;
        BackendConnection ready = null;
        Waiter waiter = null;
        boolean create = false;
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new BackendUnavailableException("pool for " + address + " is closed", false));
            }
            if (preferred != null) {
                for (var it = idle.descendingIterator(); it.hasNext(); ) {
                    BackendConnection c = it.next();
                    if (c.eventLoop() == preferred && c.isOpen() && c.generation() == generation) {
                        it.remove();
                        ready = c;
                        break;
                    }
                }
            }
            // Below the limit, a new connection on the caller's loop beats an idle one on another
            // loop: every request on it would otherwise cross threads twice.
            boolean grow = ready == null && preferred != null && open < maxSize;
            while (ready == null && !grow && !idle.isEmpty()) {
                BackendConnection c = idle.pollLast();
                if (c.isOpen() && c.generation() == generation) {
                    ready = c;
                    break;
                }
                open--;
                if (stale == null) {
                    stale = new ArrayList<>();
                }
                stale.add(c);
            }
            if (ready != null) {
                inUse++;
            } else if (open < maxSize) {
                open++;
                inUse++;
                create = true;
            } else {
                Waiter w = new Waiter();
                // The timeout is set before the waiter is visible to release(), which cancels it.
                w.timeout = timer.schedule(() -> timeOut(w), maxWait.toMillis(), TimeUnit.MILLISECONDS);
                waiters.add(w);
                countWaiters();
                waiter = w;
            }
        }
        if (stale != null) {
            stale.forEach(BackendConnection::close);
        }
        if (ready != null) {
            listener.borrowed(System.nanoTime() - start, false);
            return CompletableFuture.completedFuture(ready);
        }
        if (create) {
            return createFor(start, preferred);
        }
        return waiter.future;
    }

    /** Returns a connection after a clean round trip. */
    public void release(BackendConnection connection) {
        Waiter handTo = null;
        boolean keep;
        synchronized (this) {
            inUse--;
            keep = !closed && connection.isOpen() && connection.generation() == generation && open <= maxSize;
            if (keep) {
                handTo = waiters.poll();
                countWaiters();
                if (handTo != null) {
                    inUse++;
                } else {
                    idle.addLast(connection);
                }
            } else {
                open--;
            }
        }
        if (!keep) {
            connection.close();
            replaceForWaiter();
        } else if (handTo != null) {
            handTo.timeout.cancel(false);
            listener.borrowed(System.nanoTime() - handTo.startNanos, false);
            handTo.future.complete(connection);
        }
    }

    /** Drops a connection whose state is unknown (failed mid-request). */
    public void discard(BackendConnection connection) {
        synchronized (this) {
            inUse--;
            open--;
        }
        connection.close();
        replaceForWaiter();
    }

    /** Closes idle connections and retires busy ones when they come back (member went away or stepped down). */
    public void clear() {
        List<BackendConnection> toClose;
        synchronized (this) {
            generation++;
            toClose = new ArrayList<>(idle);
            open -= idle.size();
            idle.clear();
        }
        toClose.forEach(BackendConnection::close);
    }

    public void close() {
        List<Waiter> failed;
        synchronized (this) {
            closed = true;
            failed = new ArrayList<>(waiters);
            waiters.clear();
            countWaiters();
        }
        clear();
        failed.forEach(w -> {
            w.timeout.cancel(false);
            w.future.completeExceptionally(new BackendUnavailableException("pool for " + address + " closed", false));
        });
    }

    public synchronized int idleConnections() {
        return idle.size();
    }

    /** Opens a connection for the longest waiter when below the limit; false when there was none to open. */
    private boolean replaceForWaiter() {
        Waiter w;
        synchronized (this) {
            if (closed || waiters.isEmpty() || open >= maxSize) {
                return false;
            }
            w = waiters.poll();
            countWaiters();
            open++;
            inUse++;
        }
        w.timeout.cancel(false);
        Waiter waiter = w;
        createFor(w.startNanos, null).whenComplete((c, e) -> {
            if (e != null) {
                waiter.future.completeExceptionally(e);
            } else {
                waiter.future.complete(c);
            }
        });
        return true;
    }

    private CompletableFuture<BackendConnection> createFor(long startNanos, EventLoop loop) {
        long gen;
        synchronized (this) {
            gen = generation;
        }
        return connector.connect(address, gen, loop)
                .thenCompose(c -> handshake(c).thenCompose(ignored -> login.login(c, connector.connectTimeout())).thenApply(ignored -> c))
                .whenComplete((c, e) -> {
                    if (e == null) {
                        listener.borrowed(System.nanoTime() - startNanos, false);
                        return;
                    }
                    List<Waiter> failed;
                    synchronized (this) {
                        open--;
                        inUse--;
                        failed = new ArrayList<>(waiters);
                        waiters.clear();
                        countWaiters();
                    }
                    for (Waiter w : failed) {
                        w.timeout.cancel(false);
                        w.future.completeExceptionally(e instanceof CompletionException ce ? ce.getCause() : e);
                    }
                });
    }

    /** The first command on a connection identifies the proxy in the backend's logs and currentOp. */
    private CompletableFuture<OpMsg> handshake(BackendConnection c) {
        BsonDocument hello = new BsonDocument("isMaster", new BsonInt32(1))
                .append("client", new BsonDocument("application", new BsonDocument("name", new BsonString("thermocline-proxy")))
                        .append("driver", new BsonDocument("name", new BsonString("thermocline")).append("version", new BsonString("0.1.0")))
                        .append("os", new BsonDocument("type", new BsonString(System.getProperty("os.name", "unknown")))))
                .append("$db", new BsonString("admin"));
        if (!compressors.isEmpty()) {
            BsonArray offered = new BsonArray();
            compressors.forEach(x -> offered.add(new BsonString(x.wireName())));
            hello.append("compression", offered);
        }
        return c.roundTrip(OpMsg.request(BackendConnection.nextRequestId(), hello), connector.connectTimeout())
                .whenComplete((r, e) -> {
                    if (e != null) {
                        c.close();
                        return;
                    }
                    BsonValue agreed = r.body().get("compression");
                    if (agreed != null && agreed.isArray() && !agreed.asArray().isEmpty() && agreed.asArray().get(0).isString()) {
                        Compressor.byName(agreed.asArray().get(0).asString().getValue())
                                .filter(compressors::contains).ifPresent(c::compressWith);
                    }
                });
    }

    private void timeOut(Waiter w) {
        boolean removed;
        synchronized (this) {
            removed = waiters.remove(w);
            countWaiters();
        }
        if (removed) {
            listener.borrowed(System.nanoTime() - w.startNanos, true);
            w.future.completeExceptionally(new PoolTimeoutException("all " + maxSize + " connections to " + tier.label()
                    + " member " + address + " stayed busy for " + maxWait.toMillis()
                    + " ms (pool size is the tier's connectionBudget divided among the live proxy replicas)"));
        }
    }

    /** Keeps the lock-free waiter count in step; called under the lock after the queue changed. */
    private void countWaiters() {
        waiting = waiters.size();
    }
}
