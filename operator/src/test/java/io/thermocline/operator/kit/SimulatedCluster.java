package io.thermocline.operator.kit;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * A namespace of the mock API server that behaves like a real cluster where the operator's
 * safety depends on it: the {@link GarbageCollector} (propagation policies, owner references),
 * the {@link Workloads} controllers and kubelet (owned pods and PVCs, pods Terminating for a
 * while), and the API server's refusal of immutable StatefulSet changes ({@link ApiServerValidation}). One background loop drives both every 100 ms; close it at the end of the test.
 */
public final class SimulatedCluster implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(SimulatedCluster.class);
    private final GarbageCollector garbageCollector;
    private final Workloads workloads;
    private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor();
    private ApiServerValidation apiServer;

    /** As below, with the API server's refusal of immutable StatefulSet changes ({@link ApiServerValidation}) installed. */
    public SimulatedCluster(KubernetesClient client, String namespace, io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server) {
        this(client, namespace);
        apiServer = ApiServerValidation.install(server);
    }

    public SimulatedCluster(KubernetesClient client, String namespace) {
        garbageCollector = new GarbageCollector(client, namespace);
        workloads = new Workloads(client, namespace);
        loop.scheduleWithFixedDelay(this::tick, 0, 100, TimeUnit.MILLISECONDS);
    }

    /** The API server's validation, when installed. */
    public ApiServerValidation apiServer() {
        return apiServer;
    }

    public GarbageCollector garbageCollector() {
        return garbageCollector;
    }

    public Workloads workloads() {
        return workloads;
    }

    private void tick() {
        try {
            workloads.run();
            garbageCollector.collect();
        } catch (Throwable e) { // an escaping throwable would end the schedule: the cluster would stop behaving
            LOG.warnf("simulated cluster tick failed: %s", e.toString());
        }
    }

    @Override
    public void close() {
        loop.shutdownNow();
    }
}
