package io.thermocline.proxy.server;

import com.mongodb.ConnectionString;
import io.thermocline.config.FleetConfig;
import io.thermocline.config.ProxyConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.TierConfig;
import io.thermocline.proxy.fleet.FleetSettings;
import io.thermocline.proxy.server.memory.MessageMemoryLimits;
import io.thermocline.wire.Compressor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything the proxy server needs, derived from the validated {@link ThermoclineConfig}; the
 * timing knobs that are not part of the config schema keep defaults that suit a proxy next to
 * its backends and can be changed for tests with the {@code with...} methods.
 *
 * @param httpPort -1 disables the HTTP endpoint, 0 picks an ephemeral port
 * @param messageMemory what client messages may hold, per connection and in all ({@code proxy.maxBufferedBytes*})
 * @param stallConfirmed how long the archive's primary may leave the serving probe's read unanswered before requests that
 *     need the archive are refused as stalled ({@link io.thermocline.proxy.topology.ServingProbe}, docs/faults.md)
 * @param handshakeDeadline where authentication is required, how long a connection that has not logged in may take to
 *     complete a message before it is closed
 */
public record ProxySettings(
        String listenHost,
        int port,
        String httpHost,
        int httpPort,
        int maxClientConnections,
        int maxMessageSizeBytes,
        List<Compressor> compressors,
        Duration drainTimeout,
        String instanceId,
        TierEndpoint archive,
        TierEndpoint fast,
        Duration poolWaitTimeout,
        Duration primaryWaitTimeout,
        Duration stallConfirmed,
        Duration handshakeDeadline,
        Duration heartbeatInterval,
        Duration connectTimeout,
        String transport,
        FleetSettings fleet,
        MessageMemoryLimits messageMemory) {

    /**
     * One tier's connection string, this instance's per-member pool size at start, and the budget per
     * member for the whole fleet (which the fleet re-divides among live replicas).
     */
    public record TierEndpoint(ConnectionString uri, int poolSize, int budget) {}

    public static ProxySettings from(ThermoclineConfig config) {
        ProxyConfig p = config.proxy();
        FleetConfig fleet = config.fleet();
        List<Compressor> compressors = new ArrayList<>();
        for (String name : p.compressors()) {
            Compressor.byName(name).filter(c -> c != Compressor.NOOP).ifPresent(compressors::add);
        }
        return new ProxySettings(
                p.listenHost(),
                p.port(),
                p.httpHost(),
                p.httpPort(),
                p.maxClientConnections(),
                p.maxMessageSizeBytes(),
                List.copyOf(compressors),
                p.drainTimeout(),
                fleet.instanceId(),
                endpoint(config.tiers().archive(), fleet),
                config.tiers().fast() == null ? null : endpoint(config.tiers().fast(), fleet),
                Duration.ofSeconds(10),
                Duration.ofSeconds(10),
                io.thermocline.proxy.topology.ServingProbe.DEFAULT_STALL_CONFIRMED,
                ClientConnection.DEFAULT_HANDSHAKE_DEADLINE,
                Duration.ofMillis(500),
                Duration.ofSeconds(5),
                p.transport(),
                fleet.hasPeers() ? FleetSettings.of(p.listenHost(), fleet) : null,
                new MessageMemoryLimits(
                        p.bufferedBytesPerConnectionLimit(),
                        p.bufferedBytesLimit(),
                        Math.min(
                                2L * ClientConnection.UNAUTHENTICATED_MESSAGE_LIMIT,
                                p.bufferedBytesPerConnectionLimit()),
                        MessageMemoryLimits.DEFAULT_STALL_TIMEOUT));
    }

    private static TierEndpoint endpoint(TierConfig tier, FleetConfig fleet) {
        return new TierEndpoint(new ConnectionString(tier.uri()), fleet.poolSize(tier), tier.connectionBudget());
    }

    /** With peers: a fleet whose replicas find each other at {@code peers}. */
    public ProxySettings withFleet(FleetSettings f) {
        return new ProxySettings(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                compressors,
                drainTimeout,
                instanceId,
                archive,
                fast,
                poolWaitTimeout,
                primaryWaitTimeout,
                stallConfirmed,
                handshakeDeadline,
                heartbeatInterval,
                connectTimeout,
                transport,
                f,
                messageMemory);
    }

    public ProxySettings withTimeouts(Duration poolWait, Duration primaryWait, Duration heartbeat) {
        return new ProxySettings(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                compressors,
                drainTimeout,
                instanceId,
                archive,
                fast,
                poolWait,
                primaryWait,
                stallConfirmed,
                handshakeDeadline,
                heartbeat,
                connectTimeout,
                transport,
                fleet,
                messageMemory);
    }

    /** Other limits for what client messages hold (tests that make them small). */
    public ProxySettings withMessageMemory(MessageMemoryLimits limits) {
        return new ProxySettings(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                compressors,
                drainTimeout,
                instanceId,
                archive,
                fast,
                poolWaitTimeout,
                primaryWaitTimeout,
                stallConfirmed,
                handshakeDeadline,
                heartbeatInterval,
                connectTimeout,
                transport,
                fleet,
                limits);
    }

    /** Another replica of the same fleet: its own id, so cursor ids name their owner. */
    public ProxySettings withInstanceId(String id) {
        return new ProxySettings(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                compressors,
                drainTimeout,
                id,
                archive,
                fast,
                poolWaitTimeout,
                primaryWaitTimeout,
                stallConfirmed,
                handshakeDeadline,
                heartbeatInterval,
                connectTimeout,
                transport,
                fleet,
                messageMemory);
    }

    /** Another stall confirmation (tests that stall an archive on purpose: the default suits a loaded production host). */
    public ProxySettings withStallConfirmed(Duration confirmed) {
        return new ProxySettings(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                compressors,
                drainTimeout,
                instanceId,
                archive,
                fast,
                poolWaitTimeout,
                primaryWaitTimeout,
                confirmed,
                handshakeDeadline,
                heartbeatInterval,
                connectTimeout,
                transport,
                fleet,
                messageMemory);
    }

    /** Another handshake deadline (a test that waits for an unauthenticated connection to be closed). */
    public ProxySettings withHandshakeDeadline(Duration deadline) {
        return new ProxySettings(
                listenHost,
                port,
                httpHost,
                httpPort,
                maxClientConnections,
                maxMessageSizeBytes,
                compressors,
                drainTimeout,
                instanceId,
                archive,
                fast,
                poolWaitTimeout,
                primaryWaitTimeout,
                stallConfirmed,
                deadline,
                heartbeatInterval,
                connectTimeout,
                transport,
                fleet,
                messageMemory);
    }
}
