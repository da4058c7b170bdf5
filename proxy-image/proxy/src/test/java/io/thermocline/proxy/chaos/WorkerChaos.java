package io.thermocline.proxy.chaos;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.thermocline.config.EvictorConfig;
import io.thermocline.config.FeederConfig;
import io.thermocline.config.WarmerConfig;
import io.thermocline.tiering.evictor.Evictor;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.warmer.Warmer;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.InjectedCrash;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Runs the feeder, the evictor and the warmer and kills them: each incarnation dies at a named
 * {@link FaultPoint}, between any two of its driver calls ({@link CrashingClient}), or is closed at a
 * random moment; a supervisor starts a new incarnation (fresh clients, as a restarted process) at once.
 */
public final class WorkerChaos implements AutoCloseable {

    private final TieredFleet fleet;
    private final Random random;
    private final AtomicBoolean stopped = new AtomicBoolean();
    /** Off until the first feeder streams: writes made before the first feeder start are not mirrored, by design. */
    private final AtomicBoolean armed = new AtomicBoolean();

    /** Every feeder this chaos starts counts into one set of metrics (restarted feeders reuse it). */
    private final PrometheusRegistry feederMetrics = new PrometheusRegistry();

    public final AtomicInteger crashes = new AtomicInteger();
    public final AtomicInteger kills = new AtomicInteger();
    /** Set once a feeder died after the archive acknowledged a batch and before its checkpoint (forced once per run). */
    public final AtomicBoolean crashedBetweenArchiveAndCheckpoint = new AtomicBoolean();

    private final List<Incarnation> workers = new ArrayList<>();
    /** The clean workers {@link #quiesce()} started. */
    private final List<AutoCloseable> calm = new ArrayList<>();

    private Thread supervisor;

    /** One running worker and the life its clients share. */
    private static final class Incarnation {
        final String name;
        final Function<CrashingClient.Life, AutoCloseable> start;
        final Function<AutoCloseable, Boolean> running;
        volatile AutoCloseable worker;
        volatile CrashingClient.Life life;

        Incarnation(
                String name,
                Function<CrashingClient.Life, AutoCloseable> start,
                Function<AutoCloseable, Boolean> running) {
            this.name = name;
            this.start = start;
            this.running = running;
        }
    }

    public WorkerChaos(TieredFleet fleet, long seed) {
        this.fleet = fleet;
        this.random = new Random(seed * 7919 + 13);
    }

    private boolean chance(int oneIn) {
        synchronized (random) {
            return armed.get() && !stopped.get() && random.nextInt(oneIn) == 0;
        }
    }

    /** Named fault points: the worker dies there now and then. */
    private final FaultInjection namedPoints = point -> {
        boolean first = point == FaultPoint.FEEDER_ARCHIVE_WRITTEN
                && armed.get()
                && !stopped.get()
                && !crashedBetweenArchiveAndCheckpoint.getAndSet(true);
        if (first || chance(20)) {
            crashes.incrementAndGet();
            throw new InjectedCrash(point);
        }
    };

    public WorkerChaos start() throws InterruptedException {
        Incarnation feeder = new Incarnation("feeder", life -> feeder(life, namedPoints), w -> ((Feeder) w).running());
        workers.add(feeder);
        launch(feeder);
        // a positive wait: a loaded machine only makes it slower (20 s was missed at load 30-40, issue 40 item 3)
        if (!((Feeder) feeder.worker).awaitStreaming(Duration.ofSeconds(90))) {
            throw new AssertionError("the first feeder did not start streaming within 90 s");
        }
        armed.set(true);
        Incarnation warmer =
                new Incarnation("warmer", life -> warmer(life, namedPoints).start(), w -> ((Warmer) w).running());
        Incarnation evictor =
                new Incarnation("evictor", life -> evictor(life, namedPoints).start(), w -> ((Evictor) w).running());
        workers.add(warmer);
        workers.add(evictor);
        launch(warmer);
        launch(evictor);
        supervisor = new Thread(this::supervise, "history-chaos");
        supervisor.setDaemon(true);
        supervisor.start();
        return this;
    }

    private void launch(Incarnation incarnation) {
        // the feeder makes a driver call per batch and per probe, the others several per step
        int oneIn = incarnation.name.equals("feeder") ? 150 : 60;
        CrashingClient.Life life = new CrashingClient.Life(() -> {
            boolean die = chance(oneIn);
            if (die) {
                crashes.incrementAndGet();
            }
            return die;
        });
        incarnation.life = life;
        incarnation.worker = incarnation.start.apply(life);
    }

    private void supervise() {
        while (!stopped.get()) {
            for (Incarnation incarnation : workers) {
                boolean dead = !incarnation.running.apply(incarnation.worker)
                        || incarnation.life.deadForNanos()
                                > Duration.ofSeconds(1).toNanos();
                boolean kill = chance(150);
                if (dead || kill) {
                    if (kill && !dead) {
                        kills.incrementAndGet();
                    }
                    closeQuietly(incarnation.worker);
                    if (!stopped.get()) {
                        launch(incarnation);
                    }
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private Feeder feeder(CrashingClient.Life life, FaultInjection faults) {
        Feeder.Options options = Feeder.Options.defaults()
                .withInstanceId("feeder-" + System.nanoTime())
                .withProbeInterval(Duration.ofMillis(50))
                .withLeaseDuration(Duration.ofMillis(600))
                .withErrorBackoff(Duration.ofMillis(50))
                .withDeadLetterRetryInterval(Duration.ofMillis(300))
                .withRegistry(feederMetrics)
                .withFaults(faults);
        return new Feeder(
                        client(fleet.fastWorkers, life),
                        client(fleet.archiveWorkers, life),
                        List.of(TieredFleet.POLICY),
                        new FeederConfig(50, Duration.ofMillis(10), true),
                        options)
                .start();
    }

    private Warmer warmer(CrashingClient.Life life, FaultInjection faults) {
        Warmer.Options options = Warmer.Options.defaults()
                .withBarrierTimeout(Duration.ofSeconds(10))
                .withRecheckInterval(Duration.ofMillis(100))
                .withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry())
                .withFaults(faults);
        return new Warmer(
                client(fleet.fastWorkers, life),
                client(fleet.archiveWorkers, life),
                List.of(TieredFleet.POLICY),
                new WarmerConfig(10, 100_000),
                options);
    }

    private Evictor evictor(CrashingClient.Life life, FaultInjection faults) {
        Evictor.Options options = Evictor.Options.defaults()
                // every proxy must have seen a raised bound before the evictor deletes under it
                .withBoundPropagationDelay(TieredFleet.FOLLOW.multipliedBy(4))
                .withBarrierTimeout(Duration.ofSeconds(10))
                .withErrorBackoff(Duration.ofMillis(50))
                .withRegistry(new PrometheusRegistry())
                .withFaults(faults);
        return new Evictor(
                client(fleet.fastWorkers, life),
                client(fleet.archiveWorkers, life),
                List.of(TieredFleet.POLICY),
                new EvictorConfig(Duration.ofMillis(100), 20, 100_000),
                options);
    }

    private static com.mongodb.reactivestreams.client.MongoClient client(
            com.mongodb.reactivestreams.client.MongoClient real, CrashingClient.Life life) {
        return life == null ? real : CrashingClient.wrap(real, life);
    }

    /**
     * Stops the chaos, then runs clean workers until the feeder caught up, warming completed and an
     * eviction pass finished: the state a final read must find. The clean workers go on running (a
     * linearizable read through the proxy needs a feeder) until {@link #close()}.
     */
    /** Mirror writes the archive refused for good, across every feeder this chaos started. */
    public long deadLettered() {
        return feederMetrics.scrape().stream()
                .filter(m -> m.getMetadata().getPrometheusName().equals("thermocline_feeder_dead_lettered"))
                .mapToLong(m -> (long) ((io.prometheus.metrics.model.snapshots.CounterSnapshot) m)
                        .getDataPoints()
                        .get(0)
                        .getValue())
                .sum();
    }

    public void quiesce() throws InterruptedException {
        stopChaos();
        Feeder feeder = feeder(null, FaultInjection.NONE);
        Warmer warmer = warmer(null, FaultInjection.NONE);
        Evictor evictor = evictor(null, FaultInjection.NONE);
        calm.addAll(List.of(feeder, warmer, evictor));
        if (!feeder.awaitStreaming(Duration.ofSeconds(20))) {
            throw new AssertionError("a clean feeder did not start streaming within 20 s");
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!warmer.warmAll() || !evictor.runPass().complete()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("warming or eviction did not complete within 60 s after the chaos");
            }
            Thread.sleep(50);
        }
        fleet.sync();
    }

    private void stopChaos() throws InterruptedException {
        if (stopped.getAndSet(true)) {
            return;
        }
        if (supervisor != null) {
            supervisor.interrupt();
            supervisor.join();
        }
        workers.forEach(w -> closeQuietly(w.worker));
    }

    @Override
    public void close() throws InterruptedException {
        stopChaos();
        calm.forEach(WorkerChaos::closeQuietly);
        calm.clear();
    }

    private static void closeQuietly(AutoCloseable worker) {
        try {
            worker.close();
        } catch (Exception ignored) {
            // a killed worker may fail to close; its replacement takes over
        }
    }
}
