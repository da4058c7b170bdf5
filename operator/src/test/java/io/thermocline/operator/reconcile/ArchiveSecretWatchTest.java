package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.archiveSecret;
import static io.thermocline.operator.kit.Clusters.cluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.operator.kit.ApiServerValidation;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.status.ConditionType;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The archive Secrets are watched: with the periodic re-check an hour away (a ready cluster is
 * rescheduled after 60 s at the soonest), a created or rotated Secret is still acted on within
 * seconds, because its own event reconciles the clusters that name it.
 */
@QuarkusTest
@WithKubernetesTestServer(crud = true)
@TestProfile(ArchiveSecretWatchTest.SlowResync.class)
@Timeout(120)
class ArchiveSecretWatchTest extends OperatorOnFakes {

    /** Well below the 60 s a ready cluster waits for its next periodic reconcile. */
    private static final Duration PROMPTLY = Duration.ofSeconds(10);

    private static final Duration WAIT = Duration.ofSeconds(20);

    public static class SlowResync implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("thermocline.operator.archive-probe-interval", "1h");
        }
    }

    @Inject
    Operator operator;

    ArchiveSecretWatchTest() {
        super("w", WAIT, false);
    }

    @Test
    void aRotatedArchiveSecretRestartsThePodsThatReadItPromptly() {
        client.secrets().inNamespace(ns).resource(archiveSecret(ns)).create();
        create(cluster(ns, "rotate"));
        // the workflow creates the proxy and the feeder side by side: both must exist before they are marked ready
        await().atMost(WAIT)
                .until(() -> get(Deployment.class, "rotate-feeder") != null
                        && get(Deployment.class, "rotate-proxy") != null);
        Clusters.markReady(client, ns, "rotate", 3);
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() ->
                        "True".equals(condition("rotate", ConditionType.Ready).getStatus()));
        String hash = hashOf("rotate-feeder");
        // let the reconciles the readiness edits caused pass: the next periodic one is 60 s away
        await().pollDelay(Duration.ofSeconds(2)).atMost(WAIT).until(() -> true);

        String rotated = "mongodb://app:rotated@archive-0.db:27017/?replicaSet=archive-rs";
        client.secrets().inNamespace(ns).withName("archive").edit(secret -> {
            secret.getData().put("uri", Base64.getEncoder().encodeToString(rotated.getBytes(StandardCharsets.UTF_8)));
            return secret;
        });
        await().atMost(PROMPTLY).untilAsserted(() -> {
            for (String name : List.of("rotate-feeder", "rotate-proxy")) {
                assertThat(hashOf(name)).as(name).isNotEqualTo(hash);
            }
        });
        assertThat(archive.probedUris()).contains(rotated);
    }

    @Test
    void anArchiveSecretCreatedAfterTheClusterIsFoundPromptly() {
        create(cluster(ns, "late"));
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(condition("late", ConditionType.ArchiveReachable)
                                .getReason())
                        .isEqualTo("SecretNotFound"));
        await().pollDelay(Duration.ofSeconds(2)).atMost(WAIT).until(() -> true);
        client.secrets().inNamespace(ns).resource(archiveSecret(ns)).create();
        await().atMost(PROMPTLY)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(condition("late", ConditionType.ArchiveReachable)
                                .getStatus())
                        .isEqualTo("True"));
    }

    /**
     * Issue 42 item 4: the operator caches the Secrets its clusters name and no other of their namespaces (a watch on
     * every Secret holds each Helm release and service-account token in a 512 Mi pod).
     */
    @Test
    void onlyTheSecretsAClusterNamesAreCachedAndOneItNoLongerNamesIsReleased() {
        // created before the archive's: a watch on every Secret of the namespace would hold them by the time it holds
        // that one
        client.secrets()
                .inNamespace(ns)
                .resource(opaque("sh.helm.release.v1.shop.v7", "release", "x".repeat(100_000)))
                .create();
        client.secrets()
                .inNamespace(ns)
                .resource(opaque("billing-db", "password", "not-ours"))
                .create();
        client.secrets().inNamespace(ns).resource(archiveSecret(ns)).create();
        // what an informer holds is what its list and watch requests select: the cache's view alone would not show an
        // informer on every Secret that answers only for the one named
        ApiServerValidation apiServer = ApiServerValidation.install(mockServer.getKubernetesMockServer());
        AtomicInteger unselected = apiServer.count(r -> secretsOfTheNamespace(r) && !selects(r));
        AtomicInteger byName = apiServer.count(
                r -> secretsOfTheNamespace(r) && query(r).contains("fieldSelector=metadata.name=archive"));
        create(cluster(ns, "only"));
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(condition("only", ConditionType.ArchiveReachable)
                                .getStatus())
                        .isEqualTo("True"));
        assertThat(cachedSecrets()).contains("archive").doesNotContain("sh.helm.release.v1.shop.v7", "billing-db");
        assertThat(byName).as("the archive Secret is watched by its name").hasPositiveValue();
        assertThat(unselected)
                .as("no list or watch of every Secret of the namespace")
                .hasValue(0);

        String moved = "mongodb://app:moved@archive-9.db:27017/?replicaSet=archive-rs";
        client.secrets()
                .inNamespace(ns)
                .resource(opaque("archive-2", "uri", moved))
                .create();
        edit("only", c -> c.getSpec().archive.uriSecretRef.name = "archive-2");
        // the reconcile that probed the new Secret's archive had released the old one before
        await().atMost(PROMPTLY).until(() -> archive.probedUris().contains(moved));
        assertThat(cachedSecrets())
                .contains("archive-2")
                .doesNotContain("archive", "sh.helm.release.v1.shop.v7", "billing-db");
        assertThat(unselected).hasValue(0);
    }

    /** A list or watch of this namespace's Secrets (not a GET of one by name). */
    private boolean secretsOfTheNamespace(RecordedRequest request) {
        return request.method() == HttpMethod.GET
                && request.getPath().matches("/api/v1/namespaces/" + ns + "/secrets(\\?.*)?");
    }

    /** Selected by name or by the operator's own labels: an informer holding only what it needs. */
    private static boolean selects(RecordedRequest request) {
        return query(request).contains("fieldSelector=metadata.name=")
                || query(request).contains("labelSelector=");
    }

    private static String query(RecordedRequest request) {
        return java.net.URLDecoder.decode(request.getPath(), StandardCharsets.UTF_8);
    }

    /** The names of this namespace's Secrets in every Secret cache of the operator's controller. */
    @SuppressWarnings("unchecked")
    private Set<String> cachedSecrets() {
        Controller<?> controller = (Controller<?>) operator.getRegisteredController(ThermoclineClusterReconciler.NAME)
                .orElseThrow();
        return controller.getEventSourceManager().getEventSourcesFor(Secret.class).stream()
                .filter(source -> source instanceof Cache<?>)
                .flatMap(source -> ((Cache<Secret>) source).list())
                .filter(secret -> ns.equals(secret.getMetadata().getNamespace()))
                .map(secret -> secret.getMetadata().getName())
                .collect(Collectors.toSet());
    }

    private Secret opaque(String name, String key, String value) {
        return new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .endMetadata()
                .addToData(key, Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8)))
                .build();
    }

    private String hashOf(String deployment) {
        return get(Deployment.class, deployment)
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations()
                .get(ProxyDeploymentDependent.ARCHIVE_SECRET_HASH);
    }
}
