package io.thermocline.tiering.worker;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.metadata.MetadataStore;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;

/**
 * What the feeder, evictor and warmer share: the two tiers' clients, the tiered collections, the
 * shared state, and a {@link WorkerLoop} that runs {@link #round()} until closed. A worker built
 * by {@link #startOwning} owns its clients and closes them with itself; one built over clients
 * the caller passes (the embedded default, tests) leaves them open.
 */
public abstract class Worker<W extends Worker<W>> implements AutoCloseable {

    protected final MongoClient fast;
    protected final MongoClient archive;
    protected final List<CollectionPolicy> policies;
    protected final MetadataStore store;
    /** This instance's mark on its writes and probes, e.g. {@code feeder/<instance id>}. */
    protected final String marker;
    private final WorkerLoop loop;
    private TierClients ownedClients;

    protected Worker(String name, MongoClient fast, MongoClient archive, List<CollectionPolicy> policies, WorkerOptions<?> options) {
        this.fast = fast;
        this.archive = archive;
        this.policies = List.copyOf(policies);
        this.store = new MetadataStore(fast);
        this.marker = name + "/" + options.instanceId();
        this.loop = new WorkerLoop(name, this::round, options.errorBackoff());
    }

    /**
     * Opens clients for the configured tiers (application name {@code thermocline-<name>}), builds
     * the worker over them and starts it; closing the worker closes the clients.
     */
    protected static <W extends Worker<W>> W startOwning(ThermoclineConfig config, String name,
                                                         BiFunction<MongoClient, MongoClient, W> build) {
        TierClients clients = TierClients.open(config, "thermocline-" + name);
        try {
            W worker = build.apply(clients.fast(), clients.archive());
            ((Worker<W>) worker).ownedClients = clients;
            return worker.start();
        } catch (RuntimeException e) {
            clients.close();
            throw e;
        }
    }

    /** One round of work; returns how long to pause before the next (errors back off by the options). */
    protected abstract Duration round() throws Exception;

    /** Runs {@link #round()} on the worker's own thread until closed. */
    @SuppressWarnings("unchecked")
    public W start() {
        loop.start();
        return (W) this;
    }

    /** True while the loop runs (false after close or an injected crash). */
    public boolean running() {
        return loop.running();
    }

    /** The injected crash that stopped the loop, or null. */
    public Throwable crash() {
        return loop.crash();
    }

    /** Releases what the worker holds besides its clients; called after its loop stopped. */
    protected void release() {
    }

    @Override
    public void close() {
        loop.close();
        release();
        if (ownedClients != null) {
            ownedClients.close();
        }
    }
}
