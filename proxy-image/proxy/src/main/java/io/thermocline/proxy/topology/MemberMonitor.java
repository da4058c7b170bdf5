package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Polls one member of a tier over its own connection; checks never overlap. Its own class (it was TierMonitor's inner
 * one) so the monitor holds the tier's state and this the heartbeat to one member.
 */
final class MemberMonitor {
    private final TierMonitor monitor;
    private final BackendConnector connector;
    private final EventLoopGroup group;
    private final Duration heartbeat;
    private final ServerAddress address;
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile boolean again;
    private volatile boolean stopped;
    private volatile boolean useHello = true;
    private volatile BackendConnection connection;
    private volatile ScheduledFuture<?> next;

    MemberMonitor(
            TierMonitor monitor,
            ServerAddress address,
            BackendConnector connector,
            EventLoopGroup group,
            Duration heartbeat) {
        this.monitor = monitor;
        this.address = address;
        this.connector = connector;
        this.group = group;
        this.heartbeat = heartbeat;
    }

    void check() {
        if (stopped) {
            return;
        }
        if (!running.compareAndSet(false, true)) {
            again = true;
            return;
        }
        ScheduledFuture<?> n = next;
        if (n != null) {
            n.cancel(false);
        }
        BackendConnection c = connection;
        CompletableFuture<BackendConnection> conn =
                c != null && c.isOpen() ? CompletableFuture.completedFuture(c) : connector.connect(address, 0);
        conn.thenCompose(open -> {
                    connection = open;
                    BsonDocument cmd = new BsonDocument(useHello ? "hello" : "isMaster", new BsonInt32(1))
                            .append("$db", new BsonString("admin"));
                    return open.roundTrip(
                            OpMsg.request(BackendConnection.nextRequestId(), cmd),
                            connector.connectTimeout().plus(heartbeat));
                })
                .whenComplete((reply, error) -> {
                    boolean retryNow = false;
                    if (error != null) {
                        BackendConnection broken = connection;
                        if (broken != null) {
                            broken.close();
                        }
                        connection = null;
                        Throwable cause = error instanceof CompletionException ? error.getCause() : error;
                        monitor.update(MemberDescription.unknown(address, cause.getMessage()));
                    } else {
                        BsonDocument body = reply.body();
                        BsonValue ok = body.get("ok");
                        if (ok != null && ok.isNumber() && ok.asNumber().doubleValue() == 1.0) {
                            monitor.update(HelloReplies.describe(address, body, useHello));
                            BsonValue ct = body.get("$clusterTime");
                            if (ct != null && ct.isDocument()) {
                                monitor.clusterTimeSeen(ct.asDocument());
                            }
                        } else if (useHello) {
                            // Servers before 4.4 (and some wire-compatible servers) only know isMaster.
                            useHello = false;
                            retryNow = true;
                        } else {
                            monitor.update(MemberDescription.unknown(address, "isMaster failed: " + body.toJson()));
                        }
                    }
                    running.set(false);
                    if (stopped) {
                        BackendConnection open = connection;
                        if (open != null) {
                            open.close();
                        }
                        return;
                    }
                    if (retryNow || again) {
                        again = false;
                        check();
                    } else {
                        next = group.schedule(this::check, heartbeat.toMillis(), TimeUnit.MILLISECONDS);
                    }
                });
    }

    void stop() {
        stopped = true;
        ScheduledFuture<?> n = next;
        if (n != null) {
            n.cancel(false);
        }
        BackendConnection c = connection;
        if (c != null) {
            c.close();
        }
    }
}
