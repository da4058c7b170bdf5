package io.thermocline.proxy.fleet;

import com.mongodb.ServerAddress;
import io.netty.util.concurrent.EventExecutor;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.RawBsonDocument;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This replica's side of the peer links: a bounded pool of authenticated connections per peer
 * ({@link PeerPool}), one request at a time each (the backend connection's round trip), kept for reuse.
 */
final class PeerLinks implements AutoCloseable {
    private final BackendConnector connector;
    private final ClusterSecret secret;
    private final String instanceId;
    private final Duration handshakeTimeout;
    private final int perPeer;
    private final Duration maxWait;
    private final EventExecutor timer;
    private final Map<InetSocketAddress, PeerPool> pools = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** {@code perPeer} connections at most to each peer; a command beyond them waits {@code maxWait} at most. */
    PeerLinks(BackendConnector connector, ClusterSecret secret, String instanceId, Duration handshakeTimeout,
              int perPeer, Duration maxWait, EventExecutor timer) {
        this.connector = connector;
        this.secret = secret;
        this.instanceId = instanceId;
        this.handshakeTimeout = handshakeTimeout;
        this.perPeer = perPeer;
        this.maxWait = maxWait;
        this.timer = timer;
    }

    /** One command to the peer at {@code address}; {@code timeout} null waits as long as the peer takes. */
    CompletableFuture<RawBsonDocument> call(InetSocketAddress address, BsonDocument command, Duration timeout) {
        PeerPool pool = pool(address);
        return pool.borrow().thenCompose(c -> c.roundTrip(OpMsg.request(BackendConnection.nextRequestId(), command), timeout)
                .handle((reply, error) -> {
                    if (error != null) {
                        pool.discard(c);
                        throw new BackendUnavailableException("peer " + address + " failed: " + error.getMessage(), false);
                    }
                    pool.release(c);
                    return reply.body();
                }));
    }

    /** The connections open to {@code address} now, idle and busy. */
    int open(InetSocketAddress address) {
        PeerPool p = pools.get(address);
        return p == null ? 0 : p.open();
    }

    private PeerPool pool(InetSocketAddress address) {
        PeerPool p = pools.computeIfAbsent(address, a -> new PeerPool(a, perPeer, maxWait, timer, () -> connect(a)));
        if (closed) {
            p.close();
        }
        return p;
    }

    private CompletableFuture<BackendConnection> connect(InetSocketAddress address) {
        return connector.connect(new ServerAddress(address.getHostString(), address.getPort()), 0)
                .thenCompose(c -> authenticate(c).whenComplete((ok, e) -> {
                    if (e != null) {
                        c.close();
                    }
                }));
    }

    /** The mutual handshake: the peer proves the secret on our nonce and its own, then we prove it on both. */
    private CompletableFuture<BackendConnection> authenticate(BackendConnection c) {
        byte[] ours = PeerProtocol.nonce();
        BsonDocument hello = PeerProtocol.command(PeerProtocol.HELLO).append("instanceId", new BsonString(instanceId))
                .append("nonce", PeerProtocol.binary(ours));
        return c.roundTrip(OpMsg.request(BackendConnection.nextRequestId(), hello), handshakeTimeout).thenCompose(reply -> {
            RawBsonDocument body = reply.body();
            byte[] theirs = PeerProtocol.bytes(body, "nonce");
            if (!OpMsg.isOk(body) || theirs == null
                    || !secret.verify(PeerProtocol.bytes(body, "proof"), PeerProtocol.SERVER, ours, theirs)) {
                throw new BackendUnavailableException("peer " + c.address() + " is not a replica of this cluster"
                        + " (it does not hold the same fleet.secretFile)", false);
            }
            BsonDocument auth = PeerProtocol.command(PeerProtocol.AUTH)
                    .append("proof", PeerProtocol.binary(secret.proof(PeerProtocol.CLIENT, ours, theirs)));
            return c.roundTrip(OpMsg.request(BackendConnection.nextRequestId(), auth), handshakeTimeout);
        }).thenApply(reply -> {
            if (!OpMsg.isOk(reply.body())) {
                throw new BackendUnavailableException("peer " + c.address() + " refused this replica's proof: "
                        + reply.body().get("errmsg"), false);
            }
            return c;
        });
    }

    @Override
    public void close() {
        closed = true;
        pools.values().forEach(PeerPool::close);
    }
}
