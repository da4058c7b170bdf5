package io.thermocline.operator.kit;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.fakes.FakeArchive;
import io.thermocline.operator.fakes.FakeModes;
import io.thermocline.operator.fakes.FakeProxyHealth;
import io.thermocline.operator.fakes.FakeReplicaSet;
import io.thermocline.operator.fakes.FakeTiering;
import io.thermocline.operator.status.ConditionType;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;

/**
 * The operator as the reconciler tests run it: in Quarkus, on the mock API server, with a fake for
 * each thing it reaches over the network (the archive probe, the fast tier's replica set, the
 * tiering metadata, the proxies' health endpoint, the mode controllers). Each test starts with the
 * fakes reset and a namespace of its own, holding the archive Secret unless the class leaves that to
 * its tests. The operator still reconciles earlier tests' clusters: look only in {@link #ns}.
 *
 * <p>A subclass is annotated {@code @QuarkusTest @WithKubernetesTestServer(crud = true)}.
 */
public abstract class OperatorOnFakes {

    @Inject
    protected KubernetesClient client;

    @Inject
    protected FakeArchive archive;

    @Inject
    protected FakeReplicaSet replicaSet;

    @Inject
    protected FakeTiering tiering;

    @Inject
    protected FakeProxyHealth proxyHealth;

    @Inject
    protected FakeModes modes;

    @KubernetesTestServer
    protected KubernetesServer mockServer;

    /** This test's namespace. */
    protected String ns;

    private final String namespacePrefix;
    private final Duration wait;
    private final boolean archiveSecretFirst;

    /** Each test's namespace holds the archive Secret before the test starts. */
    protected OperatorOnFakes(String namespacePrefix, Duration wait) {
        this(namespacePrefix, wait, true);
    }

    /**
     * @param wait how long a helper here waits for the operator
     * @param archiveSecretFirst false: the tests create the archive Secret themselves, when they need it
     */
    protected OperatorOnFakes(String namespacePrefix, Duration wait, boolean archiveSecretFirst) {
        this.namespacePrefix = namespacePrefix;
        this.wait = wait;
        this.archiveSecretFirst = archiveSecretFirst;
    }

    @BeforeEach
    void freshFakesAndNamespace() {
        archive.reset();
        replicaSet.reset();
        tiering.reset();
        proxyHealth.reset();
        modes.reset();
        ns = namespacePrefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        if (archiveSecretFirst) {
            client.secrets()
                    .inNamespace(ns)
                    .resource(Clusters.archiveSecret(ns))
                    .create();
        }
    }

    protected void create(ThermoclineCluster cluster) {
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .resource(cluster)
                .create();
    }

    /**
     * Creates cluster {@code name} (changed by {@code spec}) and, once the workflow has created its proxy and feeder
     * (independently: the proxy also waits for its peer Secret), reports them and 3 fast-tier members ready.
     */
    protected void createReady(String name, Consumer<ThermoclineCluster> spec) {
        ThermoclineCluster cluster = Clusters.cluster(ns, name);
        spec.accept(cluster);
        create(cluster);
        for (String deployment : List.of(name + "-proxy", name + "-feeder")) {
            await().atMost(wait).until(() -> get(Deployment.class, deployment), Objects::nonNull);
        }
        Clusters.markReady(client, ns, name, 3);
    }

    /** The ThermoclineCluster as stored now; null once it is gone. */
    protected ThermoclineCluster stored(String name) {
        return client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName(name)
                .get();
    }

    /**
     * Waits until the stored cluster passes {@code check} (its assertions); until then a failed assertion, or an
     * exception from a status not written yet, is retried.
     */
    protected void awaitStored(String name, Consumer<ThermoclineCluster> check) {
        await().atMost(wait).ignoreExceptions().untilAsserted(() -> check.accept(stored(name)));
    }

    /** The condition of that type in the stored cluster's status; null while there is none. */
    protected Condition condition(String name, ConditionType type) {
        return condition(stored(name), type);
    }

    protected static Condition condition(ThermoclineCluster cluster, ConditionType type) {
        return Clusters.condition(cluster, type);
    }

    /** Edits like a user would: redone on 409, since the operator writes the resource concurrently. */
    protected void edit(String name, Consumer<ThermoclineCluster> change) {
        UserEdits.edit(client, ns, name, change, wait);
    }

    protected <T extends HasMetadata> T get(Class<T> type, String name) {
        return client.resources(type).inNamespace(ns).withName(name).get();
    }

    /** The reasons of the Events recorded in this test's namespace. */
    protected List<String> reasons() {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .map(Event::getReason)
                .toList();
    }
}
