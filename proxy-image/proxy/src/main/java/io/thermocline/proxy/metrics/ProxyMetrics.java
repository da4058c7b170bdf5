package io.thermocline.proxy.metrics;

import com.mongodb.ServerAddress;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.proxy.pool.PoolListener;
import io.thermocline.proxy.topology.Tier;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Set;

/**
 * The proxy's Prometheus metrics. Command names outside a fixed set are counted as
 * {@code other} so a client cannot blow up the label cardinality.
 */
public final class ProxyMetrics implements PoolListener {
    private static final Set<String> KNOWN_COMMANDS = Set.of("hello", "isMaster", "ping", "find", "getMore",
            "killCursors", "aggregate", "count", "distinct", "insert", "update", "delete", "findAndModify",
            "createIndexes", "dropIndexes", "listIndexes", "listCollections", "listDatabases", "create", "drop",
            "dropDatabase", "collMod", "renameCollection", "commitTransaction", "abortTransaction", "endSessions",
            "buildInfo", "serverStatus", "explain", "bulkWrite", "saslStart", "saslContinue", "getLastError",
            "dbStats", "collStats", "legacyQuery");

    private final PrometheusRegistry registry = new PrometheusRegistry();
    private final Gauge clientConnections;
    private final Counter clientConnectionsOpened;
    private final Counter clientConnectionsRejected;
    private final Counter malformedMessages;
    private final Counter commands;
    private final Histogram commandLatency;
    private final Histogram poolWait;
    private final Counter poolWaitTimeouts;
    private final Gauge poolConnections;
    private final Gauge inFlight;
    private final Gauge openCursors;
    private final Gauge primaryKnown;

    public ProxyMetrics() {
        clientConnections = Gauge.builder().name("thermocline_proxy_client_connections")
                .help("Open client connections").register(registry);
        clientConnectionsOpened = Counter.builder().name("thermocline_proxy_client_connections_opened_total")
                .help("Client connections accepted").register(registry);
        clientConnectionsRejected = Counter.builder().name("thermocline_proxy_client_connections_rejected_total")
                .help("Client connections refused past proxy.maxClientConnections").register(registry);
        malformedMessages = Counter.builder().name("thermocline_proxy_malformed_messages_total")
                .help("Client messages that failed framing or validation (the connection was closed)").register(registry);
        commands = Counter.builder().name("thermocline_proxy_commands_total")
                .help("Client commands by name and outcome (ok, error, unavailable)")
                .labelNames("command", "outcome").register(registry);
        commandLatency = Histogram.builder().name("thermocline_proxy_command_duration_seconds")
                .help("Time from receiving a client command to writing its reply")
                .labelNames("command").classicOnly()
                .classicUpperBounds(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
                .register(registry);
        poolWait = Histogram.builder().name("thermocline_proxy_pool_wait_seconds")
                .help("Time a request waited for a backend connection").labelNames("tier", "member").classicOnly()
                .classicUpperBounds(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10)
                .register(registry);
        poolWaitTimeouts = Counter.builder().name("thermocline_proxy_pool_wait_timeouts_total")
                .help("Requests that gave up waiting for a backend connection").labelNames("tier", "member")
                .register(registry);
        poolConnections = Gauge.builder().name("thermocline_proxy_pool_connections")
                .help("Backend pool connections by state (open, in_use) and waiting requests (waiters)")
                .labelNames("tier", "member", "state").register(registry);
        inFlight = Gauge.builder().name("thermocline_proxy_requests_in_flight")
                .help("Client requests being processed").register(registry);
        openCursors = Gauge.builder().name("thermocline_proxy_open_cursors")
                .help("Proxy cursors mapped to backend cursors").register(registry);
        primaryKnown = Gauge.builder().name("thermocline_proxy_backend_primary_known")
                .help("1 when the tier's primary is known").labelNames("tier").register(registry);
    }

    public static String commandLabel(String command) {
        if (command == null) {
            return "other";
        }
        if (command.equals("ismaster")) {
            return "isMaster";
        }
        return KNOWN_COMMANDS.contains(command) ? command : "other";
    }

    public void clientConnected() {
        clientConnections.inc();
        clientConnectionsOpened.inc();
    }

    public void clientDisconnected() {
        clientConnections.dec();
    }

    public void clientRejected() {
        clientConnectionsRejected.inc();
    }

    public void malformedMessage() {
        malformedMessages.inc();
    }

    public void commandFinished(String command, String outcome, long nanos) {
        String label = commandLabel(command);
        commands.labelValues(label, outcome).inc();
        commandLatency.labelValues(label).observe(nanos / 1e9);
    }

    public void inFlight(int n) {
        inFlight.set(n);
    }

    public void openCursors(int n) {
        openCursors.set(n);
    }

    public void primaryKnown(Tier tier, boolean known) {
        primaryKnown.labelValues(tier.label()).set(known ? 1 : 0);
    }

    @Override
    public void borrowed(Tier tier, ServerAddress member, long waitNanos, boolean timedOut) {
        poolWait.labelValues(tier.label(), member.toString()).observe(waitNanos / 1e9);
        if (timedOut) {
            poolWaitTimeouts.labelValues(tier.label(), member.toString()).inc();
        }
    }

    @Override
    public void sizeChanged(Tier tier, ServerAddress member, int open, int inUse, int waiters) {
        poolConnections.labelValues(tier.label(), member.toString(), "open").set(open);
        poolConnections.labelValues(tier.label(), member.toString(), "in_use").set(inUse);
        poolConnections.labelValues(tier.label(), member.toString(), "waiters").set(waiters);
    }

    public String contentType() {
        return PrometheusTextFormatWriter.CONTENT_TYPE;
    }

    public void writeTo(OutputStream out) throws IOException {
        PrometheusTextFormatWriter.create().write(out, registry.scrape());
    }

    public PrometheusRegistry registry() {
        return registry;
    }
}
