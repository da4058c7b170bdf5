package io.thermocline.proxy.server;

import com.mongodb.MongoCompressor;
import io.netty.channel.EventLoopGroup;
import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.backend.BackendConnector;
import io.thermocline.proxy.gateway.Backends;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.gateway.ForwardingGateway;
import io.thermocline.proxy.gateway.TierBackend;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.topology.ServingProbe;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.Compressor;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's way to the tiers, built from its settings: each tier's connector (TLS as {@code tls.tierCaFile} or its
 * URI asks), monitor and pool ({@link TierBackend}), the gateways over them the tiered layer is built with (which
 * carry each tier's members and outages), and the probe that tells a stalled archive. Apart from {@link ProxyServer}, which holds the lifecycle.
 */
final class TierWiring {
    /** The server's logger: the start-up events keep the logger name operators filter on. */
    private static final Logger LOG = LoggerFactory.getLogger(ProxyServer.class);

    /** How often the archive's primary is asked a read to tell a stalled archive from a serving one. */
    static final java.time.Duration SERVING_PROBE_INTERVAL = java.time.Duration.ofMillis(500);

    private TierWiring() {}

    /** Each tier's monitor and pool, on the client port's event loops (a request never crosses threads). */
    static Backends backends(
            ProxySettings settings,
            EventLoopGroup group,
            NettyTransport transport,
            ProxySecurity security,
            ProxyMetrics metrics) {
        // Replies from a member can be as large as the member allows, whatever the client-side limit.
        // Each tier's own connector: TLS as tls.tierCaFile or its URI asks (a URI with tls=true is never reached in
        // plain text).
        return new Backends(
                tierBackend(
                        Tier.ARCHIVE,
                        settings.archive(),
                        connector(settings, settings.archive(), group, transport, security),
                        settings,
                        group,
                        metrics),
                settings.fast() == null
                        ? null
                        : tierBackend(
                                Tier.FAST,
                                settings.fast(),
                                connector(settings, settings.fast(), group, transport, security),
                                settings,
                                group,
                                metrics),
                settings.primaryWaitTimeout());
    }

    /** The tiered layer's gateway to each tier: over the forwarder every other command goes through. */
    static TierGateways gateways(Forwarder forwarder, Backends backends) {
        return new TierGateways(
                new ForwardingGateway(forwarder, backends.tier(Tier.FAST)),
                new ForwardingGateway(forwarder, backends.archive()));
    }

    /**
     * A point count that finds nothing, on a tiered collection the data plane reads anyway: a stalled archive (hello
     * answered, commands not) then refuses archive-routed reads fast instead of holding each one, once the count is
     * unanswered for {@code stallConfirmed}.
     */
    static void probeArchiveServing(RoutingTable table, TierBackend archive, java.time.Duration stallConfirmed) {
        table.policies().values().stream()
                .findFirst()
                .ifPresent(p -> archive.probeServing(
                        ServingProbe.pointCount(p.database(), p.collection()), SERVING_PROBE_INTERVAL, stallConfirmed));
    }

    /** Says at start which tier is reached over TLS trusting the system store. */
    static void warnTierTls(ProxySettings settings, ProxySecurity security) {
        warnUnsupported("tiers.archive.uri", settings.archive(), security);
        if (settings.fast() != null) {
            warnUnsupported("tiers.fast.uri", settings.fast(), security);
        }
    }

    /** A tier URI asking for TLS without tls.tierCaFile is reached over TLS trusting the system store: say so at start. */
    private static void warnUnsupported(String field, ProxySettings.TierEndpoint endpoint, ProxySecurity security) {
        if (Boolean.TRUE.equals(endpoint.uri().getSslEnabled())
                && !security.tierTls().enabled()) {
            LOG.info(
                    "event=tier_tls field={} trust=system problem=\"tls=true without tls.tierCaFile: TLS trusting the JDK's system"
                            + " trust store; set tls.tierCaFile to trust only the tiers' CA\"",
                    field);
        }
    }

    /**
     * Compression towards a tier is asked for the way any driver asks: {@code compressors=} in
     * the tier's connection string. Off by default, since the proxy usually sits next to its backends.
     */
    private static List<Compressor> backendCompressors(ProxySettings.TierEndpoint endpoint) {
        List<Compressor> out = new ArrayList<>();
        for (MongoCompressor c : endpoint.uri().getCompressorList()) {
            Compressor.byName(c.getName()).filter(x -> x != Compressor.NOOP).ifPresent(out::add);
        }
        return out;
    }

    private static TierBackend tierBackend(
            Tier tier,
            ProxySettings.TierEndpoint endpoint,
            BackendConnector connector,
            ProxySettings settings,
            EventLoopGroup group,
            ProxyMetrics metrics) {
        return new TierBackend(
                tier,
                endpoint.uri(),
                endpoint.poolSize(),
                connector,
                group,
                settings.heartbeatInterval(),
                settings.poolWaitTimeout(),
                metrics,
                backendCompressors(endpoint));
    }

    private static BackendConnector connector(
            ProxySettings settings,
            ProxySettings.TierEndpoint endpoint,
            EventLoopGroup group,
            NettyTransport transport,
            ProxySecurity security) {
        return new BackendConnector(
                group,
                transport.socketChannel(),
                Math.max(settings.maxMessageSizeBytes(), 48_000_000),
                settings.connectTimeout(),
                security.tierTls().forTier(endpoint.uri()));
    }
}
