package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks the primary for {@code replSetGetStatus} every {@code optimeInterval} on a logged-in connection of its
 * own, and raises each secondary's known applied optime to what the primary reports. A tier whose user may
 * not run it (Unauthorized, 13) or whose server does not know it is asked no more: heartbeats and the
 * optimes of read replies remain.
 */
final class OptimePoll {
    private static final Logger LOG = LoggerFactory.getLogger(TierMonitor.class);
    /** Unauthorized, CommandNotFound, NoReplicationEnabled: asking again would not help. */
    private static final Set<Integer> NEVER_ALLOWED = Set.of(13, 59, 76);

    private static int code(BsonDocument reply) {
        BsonValue c = reply.get("code");
        return c != null && c.isNumber() ? c.asNumber().intValue() : 0;
    }

    private final TierMonitor monitor;
    private final BackendConnector connector;
    private final EventLoopGroup group;
    private final Duration optimeInterval;
    private volatile boolean off;
    private final OwnConnection connection;
    private volatile ScheduledFuture<?> next;

    OptimePoll(
            TierMonitor monitor,
            BackendConnector connector,
            Function<BackendConnection, CompletableFuture<Void>> login,
            EventLoopGroup group,
            Duration optimeInterval) {
        this.monitor = monitor;
        this.connector = connector;
        this.group = group;
        this.optimeInterval = optimeInterval;
        this.connection = new OwnConnection(connector, login);
    }

    void schedule() {
        if (!off && !monitor.closed()) {
            next = group.schedule(this::poll, optimeInterval.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void poll() {
        ServerAddress primary = monitor.topology().primary();
        if (primary == null || off || monitor.closed()) {
            schedule();
            return;
        }
        connection
                .to(primary)
                .thenCompose(open -> open.roundTrip(
                        OpMsg.request(
                                BackendConnection.nextRequestId(),
                                new BsonDocument("replSetGetStatus", new BsonInt32(1))
                                        .append("$db", new BsonString("admin"))),
                        connector.connectTimeout()))
                .whenComplete((reply, error) -> {
                    if (error != null) {
                        drop();
                    } else if (OpMsg.isOk(reply.body())) {
                        ReplSetOptimes.applied(reply.body()).forEach(monitor::appliedAtLeast);
                    } else if (!NEVER_ALLOWED.contains(code(reply.body()))) {
                        drop(); // e.g. the primary stepped down: ask the next one
                    } else {
                        off = true;
                        drop();
                        LOG.info(
                                "event=optime_poll_off tier={} member={} reason=\"{}\" hint=\"grant the tier's user clusterMonitor"
                                        + " for member optimes between heartbeats\"",
                                monitor.tier().label(),
                                primary,
                                reply.body().get("errmsg"));
                    }
                    schedule();
                });
    }

    private void drop() {
        connection.drop();
    }

    void stop() {
        off = true;
        ScheduledFuture<?> n = next;
        if (n != null) {
            n.cancel(false);
        }
        drop();
    }
}
