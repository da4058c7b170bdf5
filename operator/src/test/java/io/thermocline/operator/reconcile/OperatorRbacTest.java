package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.archiveSecret;
import static io.thermocline.operator.kit.Clusters.cluster;
import static io.thermocline.operator.kit.Clusters.condition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.openshift.api.model.monitoring.v1.ServiceMonitor;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.KubernetesServer;
import io.quarkus.test.kubernetes.client.KubernetesTestServer;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.api.v1alpha1.IssuerRef;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.fakes.FakeArchive;
import io.thermocline.operator.fakes.FakeReplicaSet;
import io.thermocline.operator.fakes.FakeTiering;
import io.thermocline.operator.fakes.ReplicaSetModel;
import io.thermocline.operator.fasttier.tls.FastTierCertificates;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.kit.UserEdits;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.tiering.TieringSnapshot;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The install's RBAC against what the operator does: the mock API server records every request;
 * this test's own requests carry their own User-Agent and are left out, so what remains is the
 * operator's (this cluster's lifecycle, and the clusters earlier tests left behind). Every request
 * must be one the Role grants, and every verb the Role grants must have been used, except those
 * only production makes (listed with their reason).
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
class OperatorRbacTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String TEST_AGENT = "thermocline-rbac-test";
    private static final Pattern PATH = Pattern.compile(
            "^/(?:api/v1|apis/(?<group>[^/]+)/[^/]+)(?:/namespaces/[^/]+)?/(?<resource>[^/?]+)(?:/(?<name>[^/?]+)(?:/(?<sub>[^/?]+))?)?(?:\\?(?<query>.*))?$");
    /** Granted, though this run does not send them, each for the reason given. */
    private static final Map<String, String> NOT_SENT_HERE = Map.of(
            "update thermocline.io/thermoclineclusters/finalizers",
                    "owner references with blockOwnerDeletion, where the"
                            + " OwnerReferencesPermissionEnforcement admission plugin is on (checked by the API server, not sent)",
            "delete monitoring.coreos.com/servicemonitors", "JOSDK deletes the ServiceMonitor when its CRD goes away",
            "patch policy/poddisruptionbudgets", "a changed member count patches the fast tier's PDB",
            "patch /secrets",
                    "an earlier operator's owner reference on the keyfile or users Secret is removed with a"
                            + " patch (the generated Secrets are create-only otherwise)",
            "patch networking.k8s.io/networkpolicies", "the operator's namespace changing patches the NetworkPolicy",
            "patch monitoring.coreos.com/servicemonitors", "a ServiceMonitor changes with the operator's version only");
    /** Sent by the test profile only: QOSDK applies the CRD into the mock server at start (crd.apply=false in production). */
    private static final Set<String> TEST_PROFILE_ONLY = Set.of(
            "get apiextensions.k8s.io/customresourcedefinitions",
            "create apiextensions.k8s.io/customresourcedefinitions",
            "patch apiextensions.k8s.io/customresourcedefinitions");

    @Inject
    KubernetesClient operatorClient;

    @Inject
    FakeArchive archive;

    @Inject
    FakeReplicaSet replicaSet;

    @Inject
    FakeTiering tiering;

    @KubernetesTestServer
    KubernetesServer mockServer;

    private KubernetesClient client;
    private String ns;

    @AfterEach
    void closeClient() {
        if (client != null) {
            client.close();
        }
    }

    @Test
    void theRoleGrantsWhatTheOperatorUsesAndNothingElse() throws Exception {
        client = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder(operatorClient.getConfiguration())
                        .withUserAgent(TEST_AGENT)
                        .build())
                .build();
        archive.reset();
        replicaSet.reset();
        tiering.reset();
        ns = "r-" + UUID.randomUUID().toString().substring(0, 8);
        runEveryDayTwoPath();

        Set<String> used = new TreeSet<>();
        for (RecordedRequest request : drain()) {
            if (operators(request)) {
                String verb = verbOf(request);
                if (verb != null) {
                    used.add(verb);
                }
            }
        }
        used.removeAll(TEST_PROFILE_ONLY);
        Set<String> granted = granted();
        assertThat(used).as("requests the operator made").isNotEmpty();
        assertThat(granted)
                .as("the install's Role and ClusterRole grant every request the operator makes")
                .containsAll(used);
        Set<String> unused = new TreeSet<>(granted);
        unused.removeAll(used);
        unused.removeAll(NOT_SENT_HERE.keySet());
        assertThat(used)
                .as("listed as not sent, but sent: remove them from NOT_SENT_HERE")
                .doesNotContainAnyElementsOf(NOT_SENT_HERE.keySet());
        assertThat(unused)
                .as("granted but never used by the operator: remove them from the RBAC")
                .isEmpty();
    }

    /** Creation, readiness, a rolling restart, scaling, a grown volume, a ServiceMonitor, a new window, pause, deletion. */
    private void runEveryDayTwoPath() {
        client.secrets().inNamespace(ns).resource(archiveSecret(ns)).create();
        ThermoclineCluster c = cluster(ns, "rbac");
        c.getSpec().fastTier.storage.retentionPolicy = "Delete";
        c.getSpec().fastTier.storage.storageClassName = "grows-" + ns;
        client.resources(ThermoclineCluster.class).inNamespace(ns).resource(c).create();
        ReplicaSetModel model = replicaSet.model(ns, "rbac");
        try (StatefulSetSimulator pods = new StatefulSetSimulator(client, new ClusterLayout("rbac", ns), model)) {
            await().atMost(WAIT)
                    .until(
                            () -> client.apps()
                                    .deployments()
                                    .inNamespace(ns)
                                    .withName("rbac-feeder")
                                    .get(),
                            Objects::nonNull);
            Clusters.markDeploymentsReady(client, ns, "rbac");
            awaitReady();
            edit(x -> x.getSpec().fastTier.version = "7.0.12"); // a patch release: each member restarted in turn
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> new ClusterLayout("rbac", ns)
                            .memberHosts(3).stream().allMatch(h -> "7.0.12".equals(model.version(h))));
            awaitReady();

            client.storage()
                    .v1()
                    .storageClasses()
                    .resource(new StorageClassBuilder()
                            .withNewMetadata()
                            .withName("grows-" + ns)
                            .endMetadata()
                            .withProvisioner("x")
                            .withAllowVolumeExpansion(true)
                            .build())
                    .createOr(NonDeletingOperation::update);
            for (int i = 0; i < 3; i++) {
                client.persistentVolumeClaims()
                        .inNamespace(ns)
                        .resource(new PersistentVolumeClaimBuilder()
                                .withNewMetadata()
                                .withName("data-rbac-fast-" + i)
                                .endMetadata()
                                .withNewSpec()
                                .withStorageClassName("grows-" + ns)
                                .withNewResources()
                                .addToRequests("storage", new Quantity("10Gi"))
                                .endResources()
                                .endSpec()
                                .build())
                        .createOr(NonDeletingOperation::update);
            }
            client.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .resource(ObservabilityDependentsTest.serviceMonitorCrd())
                    .createOr(NonDeletingOperation::update);
            await().atMost(WAIT).until(() -> client.supports("monitoring.coreos.com/v1", "ServiceMonitor"));
            String firstWarmer = client.batch()
                    .v1()
                    .jobs()
                    .inNamespace(ns)
                    .list()
                    .getItems()
                    .get(0)
                    .getMetadata()
                    .getName();
            edit(x -> {
                x.getSpec().proxy.port = 27000;
                x.getSpec().fastTier.storage.size = "20Gi";
                x.getSpec().collections.get(0).hotWindow = "60d";
            });
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> "20Gi"
                                    .equals(client.persistentVolumeClaims()
                                            .inNamespace(ns)
                                            .withName("data-rbac-fast-2")
                                            .get()
                                            .getSpec()
                                            .getResources()
                                            .getRequests()
                                            .get("storage")
                                            .toString())
                            && client.resources(ServiceMonitor.class)
                                            .inNamespace(ns)
                                            .withName("rbac-metrics")
                                            .get()
                                    != null
                            && client.batch()
                                            .v1()
                                            .jobs()
                                            .inNamespace(ns)
                                            .withName(firstWarmer)
                                            .get()
                                    == null);

            // fast-tier TLS from a cert-manager issuer: the Certificate created, then changed with the issuer
            edit(x -> {
                x.getSpec().tls.fastTierMode = "requireTLS";
                x.getSpec().tls.tierCaSecretRef = new SecretKeyRef("archive", "uri");
                x.getSpec().tls.issuerRef = new IssuerRef("issuer-a", "Issuer");
            });
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> certificateIssuer("rbac-fast-tls").equals("issuer-a"));
            edit(x -> x.getSpec().tls.issuerRef.name = "issuer-b");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> certificateIssuer("rbac-fast-tls").equals("issuer-b"));

            edit(x -> x.getSpec().paused = true);
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> "Paused"
                            .equals(condition(stored(), ConditionType.Ready).getReason()));
            tiering.report(new TieringSnapshot(0L, true, 1L, 1L));
            client.resources(ThermoclineCluster.class)
                    .inNamespace(ns)
                    .withName("rbac")
                    .delete();
            await().atMost(WAIT).until(() -> stored() == null);
        } finally {
            client.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .withName("servicemonitors.monitoring.coreos.com")
                    .delete();
        }
    }

    @SuppressWarnings("unchecked")
    private String certificateIssuer(String name) {
        Map<String, Object> spec =
                (Map<String, Object>) client.genericKubernetesResources(FastTierCertificates.CERTIFICATES)
                        .inNamespace(ns)
                        .withName(name)
                        .get()
                        .getAdditionalProperties()
                        .get("spec");
        return String.valueOf(((Map<String, Object>) spec.get("issuerRef")).get("name"));
    }

    private void awaitReady() {
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() ->
                        "True".equals(condition(stored(), ConditionType.Ready).getStatus()));
    }

    /**
     * The operator's requests: not this test's (its own User-Agent), and either in this test's namespace
     * or the cluster-wide reads of the informers (list, watch) and StorageClasses (get). The queue also
     * holds earlier test classes' requests, made with the operator's own client; those in their own
     * namespaces are left out with them.
     */
    private boolean operators(RecordedRequest request) {
        if (TEST_AGENT.equals(request.getHeader("User-Agent"))) {
            return false;
        }
        return request.getPath().contains("/namespaces/" + ns + "/")
                || (!request.getPath().contains("/namespaces/")
                        && request.getMethod().equals("GET"));
    }

    /** {@code verb group/resource[/subresource]} of a request, or null for discovery (which needs no grant). */
    static String verbOf(RecordedRequest request) {
        Matcher m = PATH.matcher(request.getPath());
        if (!m.matches()
                || request.getPath().matches("^/apis/[^/]+/[^/]+/?$")
                || request.getPath().matches("^/apis?/?[^/]*$")) {
            return null;
        }
        String group = m.group("group") == null ? "" : m.group("group");
        String resource = m.group("resource") + (m.group("sub") == null ? "" : "/" + m.group("sub"));
        boolean named = m.group("name") != null;
        boolean watch = m.group("query") != null && m.group("query").contains("watch=true");
        String verb = switch (request.getMethod()) {
            case "GET" -> watch ? "watch" : named ? "get" : "list";
            case "POST" -> "create";
            // the tests' mock API server has server-side apply off, so JOSDK replaces (PUT) what it applies
            // (PATCH) in a cluster: the verb production needs is patch
            case "PUT" -> "patch";
            case "PATCH" -> "patch";
            case "DELETE" -> named ? "delete" : "deletecollection";
            default -> request.getMethod().toLowerCase();
        };
        return verb + " " + group + "/" + resource;
    }

    /** What examples/install grants the operator (its Role and the StorageClass ClusterRole; leader election aside). */
    static Set<String> granted() throws IOException {
        Set<String> granted = new TreeSet<>();
        try (var docs = new YAMLMapper()
                .readerFor(JsonNode.class)
                .<JsonNode>readValues(Files.readString(Path.of("..", "examples", "install", "rbac.yaml")))) {
            while (docs.hasNext()) {
                JsonNode doc = docs.next();
                String kind = doc.path("kind").asText();
                String name = doc.at("/metadata/name").asText();
                if (!(kind.equals("Role") && name.equals("thermocline-operator"))
                        && !(kind.equals("ClusterRole") && name.equals("thermocline-operator-storageclasses"))) {
                    continue;
                }
                for (JsonNode rule : doc.path("rules")) {
                    for (JsonNode group : rule.path("apiGroups")) {
                        for (JsonNode resource : rule.path("resources")) {
                            for (JsonNode verb : rule.path("verbs")) {
                                granted.add(verb.asText() + " " + group.asText() + "/" + resource.asText());
                            }
                        }
                    }
                }
            }
        }
        return granted;
    }

    private List<RecordedRequest> drain() throws InterruptedException {
        List<RecordedRequest> requests = new java.util.ArrayList<>();
        RecordedRequest request;
        while ((request = mockServer.getKubernetesMockServer().takeRequest(10, TimeUnit.MILLISECONDS)) != null) {
            requests.add(request);
        }
        return requests;
    }

    private ThermoclineCluster stored() {
        return client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("rbac")
                .get();
    }

    private void edit(Consumer<ThermoclineCluster> change) {
        UserEdits.edit(client, ns, "rbac", change, WAIT);
    }
}
