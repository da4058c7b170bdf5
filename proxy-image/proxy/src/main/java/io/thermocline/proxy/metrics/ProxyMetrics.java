package io.thermocline.proxy.metrics;

import com.mongodb.ServerAddress;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.thermocline.proxy.http.HttpEndpoint;
import io.thermocline.proxy.http.JvmAndProcessMetrics;
import io.thermocline.proxy.pool.PoolListener;
import io.thermocline.proxy.topology.Tier;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The proxy's Prometheus metrics. Command names outside a fixed set are counted as
 * {@code other} so a client cannot blow up the label cardinality.
 */
public final class ProxyMetrics implements PoolListener, HttpEndpoint.Scrape {
    private static final Set<String> KNOWN_COMMANDS = Set.of(
            "hello",
            "isMaster",
            "ping",
            "find",
            "getMore",
            "killCursors",
            "aggregate",
            "count",
            "distinct",
            "insert",
            "update",
            "delete",
            "findAndModify",
            "createIndexes",
            "dropIndexes",
            "listIndexes",
            "listCollections",
            "listDatabases",
            "create",
            "drop",
            "dropDatabase",
            "collMod",
            "renameCollection",
            "commitTransaction",
            "abortTransaction",
            "endSessions",
            "buildInfo",
            "serverStatus",
            "explain",
            "bulkWrite",
            "saslStart",
            "saslContinue",
            "authenticate",
            "logout",
            "getLastError",
            "dbStats",
            "collStats",
            "legacyQuery");

    private final PrometheusRegistry registry = new PrometheusRegistry();
    /** Data points looked up once per label set: the request path then only increments. */
    private final Map<String, CommandSeries> commandSeries;

    private final Map<PoolKey, PoolListener.PoolCounts> pools = new ConcurrentHashMap<>();
    private volatile IntSupplier inFlightSource = () -> 0;
    /** Registries of processes sharing this one's /metrics (the embedded default's tiering workers). */
    private final List<PrometheusRegistry> alsoExposed = new CopyOnWriteArrayList<>();

    private record PoolKey(Tier tier, ServerAddress member) {}

    /** One command's data points; outcomes outside the usual four are looked up as they come. */
    private record CommandSeries(
            String label,
            CounterDataPoint ok,
            CounterDataPoint error,
            CounterDataPoint unavailable,
            DistributionDataPoint latency) {}

    private final Gauge clientConnections;
    private final Counter clientConnectionsOpened;
    private final Counter clientConnectionsRejected;
    private final Counter malformedMessages;
    private final Counter commands;
    private final Histogram commandLatency;
    private final Histogram poolWait;
    private final Counter poolWaitTimeouts;
    private final GaugeWithCallback poolConnections;
    private final GaugeWithCallback inFlight;
    private final Gauge openCursors;
    private final Gauge primaryKnown;
    private final Counter secondaryReadChoices;
    private final Counter laggingMembersSkipped;

    public ProxyMetrics() {
        clientConnections = Gauge.builder()
                .name("thermocline_proxy_client_connections")
                .help("Open client connections")
                .register(registry);
        clientConnectionsOpened = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_client_connections_opened_total")
                .help("Client connections accepted")
                .register(registry);
        clientConnectionsRejected = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_client_connections_rejected_total")
                .help("Client connections refused past proxy.maxClientConnections")
                .register(registry);
        malformedMessages = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_malformed_messages_total")
                .help("Client messages that failed framing or validation (the connection was closed)")
                .register(registry);
        commands = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_commands_total")
                .help("Client commands by name and outcome (ok, error, unavailable)")
                .labelNames("command", "outcome")
                .register(registry);
        commandLatency = Histogram.builder()
                .withoutExemplars()
                .name("thermocline_proxy_command_duration_seconds")
                .help("Time from receiving a client command to writing its reply")
                .labelNames("command")
                .classicOnly()
                .classicUpperBounds(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
                .register(registry);
        poolWait = Histogram.builder()
                .withoutExemplars()
                .name("thermocline_proxy_pool_wait_seconds")
                .help("Time a request waited for a backend connection")
                .labelNames("tier", "member")
                .classicOnly()
                .classicUpperBounds(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10)
                .register(registry);
        poolWaitTimeouts = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_pool_wait_timeouts_total")
                .help("Requests that gave up waiting for a backend connection")
                .labelNames("tier", "member")
                .register(registry);
        poolConnections = GaugeWithCallback.builder()
                .name("thermocline_proxy_pool_connections")
                .help("Backend pool connections by state (open, in_use) and waiting requests (waiters)")
                .labelNames("tier", "member", "state")
                .callback(cb -> pools.forEach((k, counts) -> {
                    String t = k.tier().label();
                    String m = k.member().toString();
                    cb.call(counts.open(), t, m, "open");
                    cb.call(counts.inUse(), t, m, "in_use");
                    cb.call(counts.waiters(), t, m, "waiters");
                }))
                .register(registry);
        inFlight = GaugeWithCallback.builder()
                .name("thermocline_proxy_requests_in_flight")
                .help("Client requests being processed")
                .callback(cb -> cb.call(inFlightSource.getAsInt()))
                .register(registry);
        Map<String, CommandSeries> series = new HashMap<>();
        for (String label : KNOWN_COMMANDS) {
            series.put(label, series(label));
        }
        series.put("other", series("other"));
        commandSeries = Map.copyOf(series);
        openCursors = Gauge.builder()
                .name("thermocline_proxy_open_cursors")
                .help("Proxy cursors mapped to backend cursors")
                .register(registry);
        primaryKnown = Gauge.builder()
                .name("thermocline_proxy_backend_primary_known")
                .help("1 when the tier's primary is known")
                .labelNames("tier")
                .register(registry);
        secondaryReadChoices = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_secondary_read_choices_total")
                .help("Reads whose read preference let a secondary serve them, by tier, the member that served them"
                        + " (primary, secondary) and why secondaries were allowed (read_preference: the client's; offload: the"
                        + " collection's secondaryReads policy)")
                .labelNames("tier", "member", "reason")
                .register(registry);
        laggingMembersSkipped = Counter.builder()
                .withoutExemplars()
                .name("thermocline_proxy_lagging_members_skipped_total")
                .help(
                        "Reads that passed over a member the read preference allowed because it had not applied the read's"
                                + " causal point yet (a wait on that member avoided)")
                .labelNames("tier")
                .register(registry);
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

    /** What client messages hold now, framed and inflated, and how many the budget refused (proxy.maxBufferedBytes*). */
    public void messageMemoryFrom(LongSupplier held, LongSupplier refused) {
        GaugeWithCallback.builder()
                .name("thermocline_proxy_message_buffer_bytes")
                .help(
                        "Bytes client messages hold, framed and inflated, from their first byte until answered (budget: proxy.maxBufferedBytes)")
                .callback(cb -> cb.call(held.getAsLong()))
                .register(registry);
        CounterWithCallback.builder()
                .name("thermocline_proxy_messages_refused_total")
                .help(
                        "Client messages refused unread because they did not fit the connection's or the proxy's message budget (error 146)")
                .callback(cb -> cb.call(refused.getAsLong()))
                .register(registry);
    }

    public void malformedMessage() {
        malformedMessages.inc();
    }

    private CommandSeries series(String label) {
        return new CommandSeries(
                label,
                commands.labelValues(label, "ok"),
                commands.labelValues(label, "error"),
                commands.labelValues(label, "unavailable"),
                commandLatency.labelValues(label));
    }

    public void commandFinished(String command, String outcome, long nanos) {
        CommandSeries s = command == null ? null : commandSeries.get(command);
        if (s == null) {
            s = commandSeries.get(commandLabel(command));
        }
        switch (outcome) {
            case "ok" -> s.ok().inc();
            case "error" -> s.error().inc();
            case "unavailable" -> s.unavailable().inc();
            default -> commands.labelValues(s.label(), outcome).inc();
        }
        s.latency().observe(nanos / 1e9);
    }

    /** Where the in-flight gauge reads its value when scraped. */
    public void inFlightFrom(IntSupplier source) {
        this.inFlightSource = source;
    }

    public void openCursors(int n) {
        openCursors.set(n);
    }

    public void secondaryReadChoice(Tier tier, boolean secondary, String reason, boolean laggingSkipped) {
        secondaryReadChoices
                .labelValues(tier.label(), secondary ? "secondary" : "primary", reason)
                .inc();
        if (laggingSkipped) {
            laggingMembersSkipped.labelValues(tier.label()).inc();
        }
    }

    public void primaryKnown(Tier tier, boolean known) {
        primaryKnown.labelValues(tier.label()).set(known ? 1 : 0);
    }

    @Override
    public BorrowRecorder poolCreated(Tier tier, ServerAddress member, PoolCounts counts) {
        pools.put(new PoolKey(tier, member), counts);
        String t = tier.label();
        String m = member.toString();
        DistributionDataPoint waitTime = poolWait.labelValues(t, m);
        CounterDataPoint timeouts = poolWaitTimeouts.labelValues(t, m);
        return (waitNanos, timedOut) -> {
            waitTime.observe(waitNanos / 1e9);
            if (timedOut) {
                timeouts.inc();
            }
        };
    }

    @Override
    public String contentType() {
        return PrometheusTextFormatWriter.CONTENT_TYPE;
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
        MetricSnapshots.Builder all = MetricSnapshots.builder();
        registry.scrape().forEach(all::metricSnapshot);
        JvmAndProcessMetrics.registry().scrape().forEach(all::metricSnapshot);
        for (PrometheusRegistry other : alsoExposed) {
            other.scrape().forEach(all::metricSnapshot);
        }
        PrometheusTextFormatWriter.create().write(out, all.build());
    }

    /** Serves {@code other}'s metrics on this /metrics too, for components that run in the proxy's process. */
    public void alsoExpose(PrometheusRegistry other) {
        alsoExposed.add(other);
    }

    public PrometheusRegistry registry() {
        return registry;
    }
}
