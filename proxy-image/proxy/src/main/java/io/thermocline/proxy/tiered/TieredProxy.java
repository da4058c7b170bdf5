package io.thermocline.proxy.tiered;

import com.mongodb.reactivestreams.client.MongoClient;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.Mode;
import io.thermocline.config.ReadConsistency;
import io.thermocline.config.ShadowConfig;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.config.TlsConfig;
import io.thermocline.proxy.causal.ArchivePresent;
import io.thermocline.proxy.causal.CausalPoints;
import io.thermocline.proxy.causal.FastTierClock;
import io.thermocline.proxy.causal.FastTierWrites;
import io.thermocline.proxy.causal.MirrorProgress;
import io.thermocline.proxy.causal.ReadBarrier;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.gateway.ErrorMapping;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.mode.ModeGate;
import io.thermocline.proxy.mode.Modes;
import io.thermocline.proxy.mode.ShadowComparator;
import io.thermocline.proxy.tiered.changestreams.OwnTransactionLedger;
import io.thermocline.proxy.tiered.changestreams.UpdateLookups;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.TieringFollower;
import io.thermocline.proxy.tiered.writes.Promotion;
import io.thermocline.proxy.tiered.writes.RetryableReplies;
import io.thermocline.proxy.tiered.writes.TieredWrites;
import io.thermocline.proxy.tiered.writes.WriteRaces;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.metadata.StateFollower;
import io.thermocline.tiering.metrics.BarrierWaits;
import io.thermocline.tiering.mode.ModeController;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.OwnWrites;
import io.thermocline.tiering.provenance.UserDeletes;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.state.MirroredThrough;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.TierClients;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * Builds the tiered layer from one {@link ThermoclineConfig}: with a fast tier and at least one
 * collection policy it routes tiered namespaces across both tiers; the server
 * ({@code ProxyServer.create(config)}) passes every other command through to the archive.
 */
public final class TieredProxy {

    /** How long the tiered layer's own archive requests wait for a member to answer (the driver's default is 30 s). */
    static final Duration ARCHIVE_SELECTION = Duration.ofSeconds(3);

    /** How long a linearizable read waits for this proxy's write stream to reach the fast tier's present before it probes. */
    static final Duration STREAM_CATCH_UP = Duration.ofSeconds(1);

    /**
     * Knobs that are not part of the config schema.
     *
     * @param followInterval how often the proxy re-reads the shared tiering state; evictors must wait
     *                       {@link StateFollower#propagationDelay(Duration)} of it after raising a bound
     * @param barrierTimeout how long a write waits for the feeder at a sync barrier or promotion
     * @param fenceRetention the fence retention the evictor uses (a copy-up gives up after half of it)
     * @param writeRaces     {@link WriteRaces#NONE} in production
     */
    public record Options(
            Duration followInterval,
            Duration barrierTimeout,
            Duration fenceRetention,
            WriteRaces writeRaces,
            Mode requestedMode,
            ShadowConfig shadow,
            Duration modeLease,
            Runnable writeStreamReceived) {
        public static Options defaults() {
            return new Options(
                    Duration.ofMillis(500),
                    Duration.ofSeconds(10),
                    Duration.ofMinutes(10),
                    WriteRaces.NONE,
                    null,
                    ShadowConfig.defaults(),
                    Duration.ofSeconds(5),
                    () -> {});
        }

        /**
         * Tests only: runs on this proxy's stream of fast-tier writes each time it received a write to a tiered namespace,
         * before it records it (a test holds it there: reads must not pass on what the stream has not recorded).
         */
        public Options withWriteStreamReceived(Runnable hook) {
            return new Options(
                    followInterval, barrierTimeout, fenceRetention, writeRaces, requestedMode, shadow, modeLease, hook);
        }

        public Options withFollowInterval(Duration interval) {
            return new Options(
                    interval,
                    barrierTimeout,
                    fenceRetention,
                    writeRaces,
                    requestedMode,
                    shadow,
                    modeLease,
                    writeStreamReceived);
        }

        /** Tests only: worker steps run between the write path's decision and its write. */
        public Options withWriteRaces(WriteRaces races) {
            return new Options(
                    followInterval,
                    barrierTimeout,
                    fenceRetention,
                    races,
                    requestedMode,
                    shadow,
                    modeLease,
                    writeStreamReceived);
        }

        /**
         * The config's {@code mode} (written as a request at start; null: none) and {@code shadow} section.
         * {@code lease}: a proxy that could not read the mode document for this long refuses tiered commands.
         */
        public Options withModes(Mode requested, ShadowConfig shadowConfig, Duration lease) {
            return new Options(
                    followInterval,
                    barrierTimeout,
                    fenceRetention,
                    writeRaces,
                    requested,
                    shadowConfig,
                    lease,
                    writeStreamReceived);
        }
    }

    private TieredProxy() {}

    /**
     * The tiered layer built from the config, before it has a way to the tiers: the server builds each tier's gateway
     * over its own connections (and the replies back to the client), then makes the routing that holds them, and counts
     * in the server's {@code registry}, from its construction on, so no command can find the layer without them.
     */
    @FunctionalInterface
    public interface Layer {
        TieredRouting reaching(
                TierGateways gateways, ClientReplies replies, ErrorMapping errors, PrometheusRegistry registry);
    }

    /** The tiered layer {@code config} asks for: none without a fast tier or without a collection policy. */
    public static Optional<Layer> routing(ThermoclineConfig config, String instanceId, Options options) {
        if (config.tiers().fast() == null || config.collections().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(routing(
                config.tiers().fast().uri(),
                config.tiers().archive().uri(),
                config.tls(),
                config.collections(),
                config.proxy().causalWaitTimeout(),
                config.proxy().readConsistency(),
                instanceId,
                options.withModes(config.mode(), config.shadow(), options.modeLease())));
    }

    /** As the full form, with {@code proxy.readConsistency} at its default, {@code linearizable}. */
    public static Layer routing(
            String fastUri,
            String archiveUri,
            List<CollectionPolicy> policies,
            Duration causalWaitTimeout,
            String instanceId,
            Options options) {
        return routing(
                fastUri, archiveUri, policies, causalWaitTimeout, ReadConsistency.LINEARIZABLE, instanceId, options);
    }

    /** As the full form, without TLS settings beyond the connection strings'. */
    public static Layer routing(
            String fastUri,
            String archiveUri,
            List<CollectionPolicy> policies,
            Duration causalWaitTimeout,
            ReadConsistency readConsistency,
            String instanceId,
            Options options) {
        return routing(
                fastUri,
                archiveUri,
                TlsConfig.defaults(),
                policies,
                causalWaitTimeout,
                readConsistency,
                instanceId,
                options);
    }

    /**
     * The tiered layer alone, with its own driver clients for promotions, tombstones and barriers
     * (TLS to the tiers with {@code tls.tierCaFile}, as the pools).
     */
    public static Layer routing(
            String fastUri,
            String archiveUri,
            TlsConfig tls,
            List<CollectionPolicy> policies,
            Duration causalWaitTimeout,
            ReadConsistency readConsistency,
            String instanceId,
            Options options) {
        MongoClient fast = TierClients.client(fastUri, "thermocline-proxy", tls);
        // a client's request waits for the archive at most this long while it is down, then fails retryably
        // (docs/faults.md)
        MongoClient archive = TierClients.client(archiveUri, "thermocline-proxy", tls, ARCHIVE_SELECTION);
        MetadataStore store = new MetadataStore(fast);
        StateFollower follower = new StateFollower(store, options.followInterval());
        MirrorProgress progress =
                new MirrorProgress(() -> store.feederCheckpoint().mirroredThrough());
        TieringFollower tiering = new TieringFollower(policies, follower, progress);
        String marker = "proxy/" + instanceId;
        ExecutorService workers = Executors.newCachedThreadPool(daemons("thermocline-tiered"));
        Fences fences = new Fences(fast, store);
        // the read barrier's probes have their own document: they never contend with the write path's barrier probes
        FastTierClock present = new FastTierClock(new MirrorBarrier(fast, store, marker + "/reads")::probe, workers);
        ReadBarrier.Watch watch = null;
        FastTierWriteStream writeStream = null;
        if (readConsistency == ReadConsistency.LINEARIZABLE) {
            // reads learn the fast tier's present from a shared ping and what it wrote from this stream: no probe write
            java.util.Set<String> tiered = new java.util.LinkedHashSet<>();
            policies.forEach(p -> tiered.add(p.database() + "." + p.collection()));
            FastTierWrites seen = new FastTierWrites();
            writeStream = new FastTierWriteStream(
                            fastUri,
                            tls,
                            instanceId,
                            tiered,
                            seen,
                            () -> store.feederCheckpoint().mirroredThrough(),
                            through -> progress.observed(new MirroredThrough(through)),
                            options.writeStreamReceived())
                    .start();
            FastTierClock pings = FastTierClock.runByCaller(writeStream::present, workers);
            watch = new ReadBarrier.Watch(seen, pings, tiered, STREAM_CATCH_UP);
        }
        FastTierWriteStream stream = writeStream;
        ReadBarrier.Watch streamWatch = watch;
        ArchivePresent archivePresent =
                new ArchivePresent(() -> archiveOperationTime(archive), workers, causalWaitTimeout);
        ModeStore modeStore = new ModeStore(store);
        Modes modes = new Modes(
                new ModeGate(
                                modeStore,
                                instanceId,
                                options.followInterval(),
                                options.modeLease(),
                                options.requestedMode())
                        .start(),
                new ShadowComparator(
                        fast,
                        modeStore,
                        ns -> tiering.table().coverage(ns),
                        instanceId,
                        options.shadow(),
                        Clock.systemUTC(),
                        Duration.ofSeconds(2)),
                new ModeController(
                                fast,
                                archive,
                                policies,
                                options.shadow(),
                                instanceId,
                                options.followInterval(),
                                options.modeLease(),
                                Clock.systemUTC())
                        .start());
        return (gateways, replies, errors, registry) -> {
            // the barrier is shared by the write path, promotions and the transaction ledger: one count of their waits
            MirrorBarrier barrier =
                    new MirrorBarrier(fast, store, marker).countingIn(BarrierWaits.in(registry, "proxy"));
            CopyUp copyUp = new CopyUp(
                    fast,
                    archive,
                    store,
                    new OwnWrites(fast, store, marker),
                    barrier,
                    options.barrierTimeout(),
                    options.fenceRetention(),
                    FaultInjection.NONE);
            Promotion promotion = new Promotion(fast, archive, copyUp, fences, workers, Clock.systemUTC());
            RoutingMetrics metrics = new RoutingMetrics(registry);
            // while the archive is down or stalled, archive-routed reads and the writes that must read it fail fast
            // instead of waiting for a feeder that cannot mirror or an archive that does not answer (docs/faults.md)
            ReadBarrier readBarrier = new ReadBarrier(
                    readConsistency,
                    present,
                    progress,
                    causalWaitTimeout,
                    streamWatch,
                    gateways.archive()::outOfServiceFor);
            TieredGauges.register(registry, modes, readBarrier, promotion, archivePresent);
            return new TieredRouting(
                    tiering,
                    new CausalPoints(100_000),
                    readBarrier,
                    archivePresent,
                    promotion,
                    new TieredWrites(
                            fast,
                            archive,
                            barrier,
                            options.barrierTimeout(),
                            new UserDeletes(fast, store),
                            fences,
                            new RetryableReplies(store),
                            metrics,
                            store,
                            instanceId,
                            options.fenceRetention(),
                            promotion,
                            options.writeRaces(),
                            gateways.archive()::outOfServiceFor),
                    fences,
                    new OwnTransactionLedger(fast, barrier, Duration.ofSeconds(2)),
                    store,
                    modes,
                    new UpdateLookups(fast, archive, fences, barrier, options.barrierTimeout()),
                    workers,
                    () -> {
                        if (stream != null) {
                            stream.close();
                        }
                        follower.close();
                        fast.close();
                        archive.close();
                    },
                    gateways,
                    replies,
                    errors,
                    metrics);
        };
    }

    /** The archive primary's last applied optime: the operationTime of a {@code ping} (a read of the present). */
    private static BsonTimestamp archiveOperationTime(MongoClient archive) {
        BsonValue time = Blocking.single(archive.getDatabase("admin")
                        .runCommand(new BsonDocument("ping", new BsonInt32(1)), BsonDocument.class))
                .map(reply -> reply.get("operationTime"))
                .orElse(null);
        return time != null && time.isTimestamp() ? time.asTimestamp() : null;
    }

    private static ThreadFactory daemons(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
