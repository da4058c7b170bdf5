package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which of the project's classes a fast-tier {@code find} runs through, measured: the official driver sends finds the
 * coverage proves the fast tier answers, while a sampler reads the proxy's stacks; a stack counts when it holds a frame
 * of the request path (the client connection, the tiered layer, the forwarder), and every project class on it is
 * listed. Sampling finds only classes that ran, so the list is a lower bound of the static trace in
 * docs/architecture.md: this measurement fails when the path runs a class the document does not name.
 *
 * <p>Not part of {@code mvn verify} (the name is not a test's): run it with {@code mvn -o -pl proxy-image/proxy
 * test-compile surefire:test@default-test -Dtest=FastTierFindTrace}.
 */
class FastTierFindTrace {

    /** Frames that mark a stack as serving a client's request (not a monitor's heartbeat, a worker or a tier's server). */
    private static final Set<String> REQUEST_PATH = Set.of(
            "io.thermocline.proxy.server.ClientConnection",
            "io.thermocline.proxy.server.CommandDispatcher",
            "io.thermocline.proxy.tiered.TieredRouting",
            "io.thermocline.proxy.gateway.Forwarder");

    /**
     * Stacks left out: a driver's monitoring hello through the same client connection, and a find the coverage stopped
     * proving while it ran, which the archive answers instead (counted apart as a fallback).
     */
    private static final Set<String> OFF_PATH = Set.of("io.thermocline.proxy.server.handshake.Hello");

    private static final String CAUSAL_TIERS = "io.thermocline.proxy.tiered.exchange.CausalTiers";

    /** The classes docs/architecture.md names for a fast-tier find (top-level classes; their lambdas and nested types count as them). */
    static final Set<String> DOCUMENTED = Set.of(
            "io.thermocline.wire.WireFrameDecoder",
            "io.thermocline.wire.WireCodec",
            "io.thermocline.wire.OpMsg",
            "io.thermocline.wire.Inbound",
            "io.thermocline.wire.WireEncoder",
            "io.thermocline.wire.Outbound",
            "io.thermocline.security.authentication.ConnectionAuth",
            "io.thermocline.config.CollectionPolicy",
            "io.thermocline.tiering.state.CoverageBound",
            "io.thermocline.tiering.state.AgeValue",
            "io.thermocline.tiering.state.TieringState",
            "io.thermocline.tiering.cache.ExpiringCache",
            "io.thermocline.tiering.mode.Phase",
            "io.thermocline.proxy.server.ClientConnection",
            "io.thermocline.proxy.server.CommandDispatcher",
            "io.thermocline.proxy.server.ProxyServer",
            "io.thermocline.proxy.server.ProxySettings",
            "io.thermocline.proxy.server.WriteRefusals",
            "io.thermocline.proxy.server.memory.ConnectionMemory",
            "io.thermocline.proxy.server.memory.MessageMemory",
            "io.thermocline.proxy.server.memory.MessageAdmission",
            "io.thermocline.proxy.server.handshake.Hello",
            "io.thermocline.proxy.server.handshake.Authentication",
            "io.thermocline.proxy.server.sessions.Sessions",
            "io.thermocline.proxy.auth.ProxySecurity",
            "io.thermocline.proxy.command.Request",
            "io.thermocline.proxy.command.CommandTraits",
            "io.thermocline.proxy.command.TopLevelElements",
            "io.thermocline.proxy.command.CommandEnvelope",
            "io.thermocline.proxy.command.ReplyFacts",
            "io.thermocline.proxy.command.ClientReplies",
            "io.thermocline.proxy.command.Client",
            "io.thermocline.proxy.mode.Modes",
            "io.thermocline.proxy.mode.ModeGate",
            "io.thermocline.proxy.mode.ModeRoute",
            "io.thermocline.proxy.routing.CommandClassifier",
            "io.thermocline.proxy.routing.CommandClass",
            "io.thermocline.proxy.routing.RoutingTable",
            "io.thermocline.proxy.routing.ReadRouter",
            "io.thermocline.proxy.routing.AgeProof",
            "io.thermocline.proxy.routing.ReadRoute",
            "io.thermocline.proxy.tiered.TieredRouting",
            "io.thermocline.proxy.tiered.admin.DbaCommands",
            "io.thermocline.proxy.tiered.exchange.Exchange",
            "io.thermocline.proxy.tiered.exchange.TieringFollower",
            "io.thermocline.proxy.tiered.exchange.CausalTiers",
            "io.thermocline.proxy.tiered.exchange.Replies",
            "io.thermocline.proxy.tiered.exchange.RoutingMetrics",
            "io.thermocline.proxy.tiered.exchange.TieredCursors",
            "io.thermocline.proxy.tiered.reads.TieredReads",
            "io.thermocline.proxy.tiered.reads.SecondaryPermission",
            "io.thermocline.proxy.gateway.TierGateways",
            "io.thermocline.proxy.gateway.ForwardingGateway",
            "io.thermocline.proxy.gateway.Forwarder",
            "io.thermocline.proxy.gateway.MemberChoice",
            "io.thermocline.proxy.gateway.TierBackend",
            "io.thermocline.proxy.gateway.TierReply",
            "io.thermocline.proxy.causal.PassThroughCausalPoint",
            "io.thermocline.proxy.causal.CausalPoints",
            "io.thermocline.proxy.topology.TierMonitor",
            "io.thermocline.proxy.topology.TierTopology",
            "io.thermocline.proxy.topology.ReadPreference",
            "io.thermocline.proxy.topology.MemberSelector",
            "io.thermocline.proxy.topology.MemberDescription",
            "io.thermocline.proxy.session.ClusterClock",
            "io.thermocline.proxy.session.SessionKey",
            "io.thermocline.proxy.session.SessionUsage",
            "io.thermocline.proxy.pool.MemberPool",
            "io.thermocline.proxy.backend.BackendConnection",
            "io.thermocline.proxy.metrics.ProxyMetrics",
            "io.thermocline.wire.MessageBudget");

    @Test
    @Timeout(180)
    void aFastTierFindRunsOnlyTheDocumentedClasses() throws Exception {
        Instant now = Instant.now();
        try (TieredStack stack = new TieredStack(Duration.ofSeconds(10), Duration.ofMillis(20))) {
            MetadataStore store = new MetadataStore(stack.fastWorkers);
            store.updateNamespace(TieredStack.POLICY.namespace(), s -> s.withCoverage(now.minus(Duration.ofHours(1))));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> !(stack.routing.table().coverage(TieredStack.POLICY.namespace())
                            instanceof CoverageBound.Nothing));
            for (int i = 0; i < 20; i++) {
                stack.orders().insertOne(TieredProxyTest.order(i, now.minus(Duration.ofMinutes(5)), "hot"));
            }
            Map<String, Integer> seen = new TreeMap<>();
            AtomicBoolean sampling = new AtomicBoolean(true);
            Thread sampler = new Thread(() -> {
                while (sampling.get()) {
                    for (StackTraceElement[] frames : Thread.getAllStackTraces().values()) {
                        record(frames, seen);
                    }
                }
            });
            long fastBefore = stack.routing.metrics().count("read", Served.FAST);
            long archiveBefore = stack.routing.metrics().count("read", Served.ARCHIVE);
            sampler.start();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            int finds = 0;
            while (System.nanoTime() < deadline) {
                List<Object> found = stack.orders()
                        .find(Filters.gte("createdAt", Date.from(now.minus(Duration.ofMinutes(30)))))
                        .into(new ArrayList<>());
                assertThat(found).hasSize(20);
                finds++;
            }
            sampling.set(false);
            sampler.join();
            long fast = stack.routing.metrics().count("read", Served.FAST) - fastBefore;
            long fellBack = stack.routing.metrics().count("read", Served.ARCHIVE) - archiveBefore;
            System.out.printf(
                    "%d finds, %d served by the fast tier (%d fell back to the archive, not sampled); %d classes in %d"
                            + " packages:%n",
                    finds, fast, fellBack, seen.size(), packages(seen.keySet()).size());
            seen.forEach((c, n) -> System.out.printf("  %6d  %s%n", n, c));
            assertThat(fast).as("the finds were served by the fast tier").isEqualTo(finds);
            assertThat(seen.keySet()).contains("io.thermocline.proxy.tiered.TieredRouting");
            assertThat(DOCUMENTED)
                    .as("a class the path runs that docs/architecture.md does not name")
                    .containsAll(seen.keySet());
        }
    }

    static void record(StackTraceElement[] stack, Map<String, Integer> seen) {
        boolean onPath = false;
        for (StackTraceElement f : stack) {
            String c = topLevel(f.getClassName());
            if (OFF_PATH.contains(c)
                    || c.equals(CAUSAL_TIERS) && f.getMethodName().equals("archive")) {
                return;
            }
            onPath |= REQUEST_PATH.contains(c);
        }
        if (!onPath) {
            return;
        }
        Set<String> once = new TreeSet<>();
        for (StackTraceElement f : stack) {
            String c = topLevel(f.getClassName());
            if (c.startsWith("io.thermocline.") && !c.startsWith("io.thermocline.embedded")) {
                once.add(c);
            }
        }
        once.forEach(c -> seen.merge(c, 1, Integer::sum));
    }

    private static String topLevel(String className) {
        int nested = className.indexOf('$');
        return nested < 0 ? className : className.substring(0, nested);
    }

    static Set<String> packages(Set<String> classes) {
        Set<String> out = new TreeSet<>();
        classes.forEach(c -> out.add(c.substring(0, c.lastIndexOf('.'))));
        return out;
    }
}
