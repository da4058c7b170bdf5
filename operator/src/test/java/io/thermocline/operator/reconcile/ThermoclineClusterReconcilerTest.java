package io.thermocline.operator.reconcile;

import static io.thermocline.operator.kit.Clusters.cluster;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.processing.GroupVersionKind;
import io.javaoperatorsdk.operator.processing.event.source.informer.Mappers;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.kubernetes.client.WithKubernetesTestServer;
import io.thermocline.config.ConfigLoader;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.archive.ArchiveReport;
import io.thermocline.operator.credentials.DataPlanePart;
import io.thermocline.operator.credentials.PeerSecretDependent;
import io.thermocline.operator.credentials.UsersSecretDependent;
import io.thermocline.operator.dataplane.DataPlaneConfig;
import io.thermocline.operator.dataplane.DataPlaneContainer;
import io.thermocline.operator.dataplane.DataPlaneMounts;
import io.thermocline.operator.fakes.FakeArchive;
import io.thermocline.operator.fakes.ReplicaSetModel;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.kit.OperatorOnFakes;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.status.ConditionType;
import io.thermocline.operator.tiering.TieringSnapshot;
import io.thermocline.operator.tiering.UniqueIndexCoverage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

@QuarkusTest
@WithKubernetesTestServer(crud = true)
class ThermoclineClusterReconcilerTest extends OperatorOnFakes {

    private static final Duration WAIT = Duration.ofSeconds(20);

    ThermoclineClusterReconcilerTest() {
        super("t", WAIT);
    }

    @Test
    void resourceProducesFastTierProxyAndWorkersWithKeyFields() {
        create(cluster(ns, "orders"));

        StatefulSet sts = await().atMost(WAIT).until(() -> get(StatefulSet.class, "orders-fast"), Objects::nonNull);
        assertThat(sts.getSpec().getReplicas()).isEqualTo(3);
        assertThat(sts.getSpec().getServiceName()).isEqualTo("orders-fast");
        Container mongod = sts.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(mongod.getImage()).isEqualTo("mongo:" + FakeArchive.VERSION);
        assertThat(String.join(" ", mongod.getCommand()))
                .contains("--replSet orders-fast")
                .contains("--keyFile /keyfile/keyfile");
        assertThat(sts.getSpec()
                        .getVolumeClaimTemplates()
                        .get(0)
                        .getSpec()
                        .getResources()
                        .getRequests()
                        .get("storage"))
                .hasToString("10Gi");
        assertThat(sts.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted())
                .isEqualTo("Retain");
        assertThat(get(Service.class, "orders-fast").getSpec().getClusterIP()).isEqualTo("None");
        // two members on one node: that node's loss takes the majority with it
        var antiAffinity = sts.getSpec().getTemplate().getSpec().getAffinity().getPodAntiAffinity();
        assertThat(antiAffinity.getRequiredDuringSchedulingIgnoredDuringExecution())
                .singleElement()
                .satisfies(t -> {
                    assertThat(t.getTopologyKey()).isEqualTo("kubernetes.io/hostname");
                    assertThat(t.getLabelSelector().getMatchLabels())
                            .containsEntry("app.kubernetes.io/component", "fast-tier")
                            .containsEntry("app.kubernetes.io/instance", "orders");
                });
        assertThat(antiAffinity.getPreferredDuringSchedulingIgnoredDuringExecution())
                .isNullOrEmpty();
        assertThat(get(PodDisruptionBudget.class, "orders-fast")
                        .getSpec()
                        .getMaxUnavailable()
                        .getIntVal())
                .as("3 members keep a majority of 2")
                .isEqualTo(1);

        Deployment proxy = await().atMost(WAIT).until(() -> get(Deployment.class, "orders-proxy"), Objects::nonNull);
        assertThat(proxy.getSpec().getReplicas()).isEqualTo(2);
        Container proxyContainer =
                proxy.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(proxyContainer.getImage()).startsWith("ghcr.io/thermocline/thermocline:");
        assertThat(proxyContainer.getCommand()).containsExactly("thermocline");
        assertThat(proxyContainer.getArgs()).containsExactly("proxy", "--config", "/etc/thermocline/thermocline.yaml");
        assertThat(proxyContainer.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo(DataPlaneConfig.ARCHIVE_URI_ENV);
            assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("archive");
        });
        assertThat(get(Service.class, "orders-proxy")
                        .getSpec()
                        .getPorts()
                        .get(0)
                        .getPort())
                .isEqualTo(27017);
        assertThat(get(Service.class, "orders-proxy-peers").getSpec().getClusterIP())
                .isEqualTo("None");
        assertThat(get(PodDisruptionBudget.class, "orders-proxy")).isNotNull();

        Deployment feeder = get(Deployment.class, "orders-feeder");
        assertThat(feeder.getSpec().getReplicas()).isEqualTo(1);
        assertThat(feeder.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getArgs())
                .startsWith("feeder");
        CronJob evictor = get(CronJob.class, "orders-evictor");
        assertThat(evictor.getSpec().getSchedule()).isEqualTo("*/10 * * * *");
        assertThat(evictor.getSpec().getSuspend()).isFalse();
        List<Job> warmers = warmers();
        assertThat(warmers).hasSize(1);
        assertThat(warmers.get(0).getMetadata().getName()).startsWith("orders-warmer-");

        ConfigMap config = get(ConfigMap.class, "orders-config");
        String yaml = config.getData().get("thermocline.yaml");
        assertThat(yaml).doesNotContain("s3cret").doesNotContain("mongodb://");
        ThermoclineConfig loaded = ConfigLoader.parse(
                yaml,
                DataPlaneConfig.podEnvironment(Clusters.ARCHIVE_URI, "mongodb://f:27017/?replicaSet=orders-fast"));
        assertThat(loaded.collections()).singleElement().satisfies(p -> {
            assertThat(p.namespace()).isEqualTo("shop.orders");
            assertThat(p.hotWindow()).isEqualTo(Duration.ofDays(30));
        });
        assertThat(loaded.fleet().poolSize(loaded.tiers().fast())).isEqualTo(100);

        Secret keyfile = get(Secret.class, "orders-keyfile");
        assertThat(keyfile.getData().get("keyfile")).hasSizeGreaterThan(700);
        Secret users = get(Secret.class, "orders-users");
        Secret peer = get(Secret.class, "orders-peer");
        assertThat(UsersSecretDependent.decoded(peer)
                        .get(PeerSecretDependent.KEY)
                        .strip())
                .as("fleet.secretFile needs at least 16 bytes")
                .hasSizeGreaterThanOrEqualTo(40);
        assertThat(proxy.getSpec().getTemplate().getSpec().getVolumes()).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo("peer");
            assertThat(v.getSecret().getSecretName()).isEqualTo("orders-peer");
        });
        assertThat(loaded.fleet().secretFile()).isEqualTo(DataPlaneMounts.PEER_SECRET_FILE);
        assertThat(proxyContainer.getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo("peer");
            assertThat(m.getMountPath() + "/" + PeerSecretDependent.KEY).isEqualTo(DataPlaneMounts.PEER_SECRET_FILE);
        });
        assertThat(fastUriOf(get(Deployment.class, "orders-proxy")))
                .contains("orders-fast-0.orders-fast." + ns + ".svc:27017")
                .contains("orders-fast-2.orders-fast." + ns + ".svc:27017")
                .contains("replicaSet=orders-fast")
                .contains("$(" + DataPlaneContainer.FAST_PASSWORD_ENV + ")")
                .doesNotContain(UsersSecretDependent.decoded(users).get(UsersSecretDependent.DATA_PLANE_PASSWORD));

        // one user per part, each in its own Secret with its own password, none in another part's pods
        List<Secret> partUsers = new ArrayList<>();
        Set<String> passwords = new HashSet<>();
        passwords.add(UsersSecretDependent.decoded(users).get(UsersSecretDependent.DATA_PLANE_PASSWORD));
        for (DataPlanePart part : DataPlanePart.values()) {
            Secret secret = get(Secret.class, "orders-" + part.role() + "-fast-user");
            assertThat(secret).as(part.role()).isNotNull();
            assertThat(UsersSecretDependent.decoded(secret)).containsEntry(DataPlanePart.USERNAME, part.user());
            passwords.add(UsersSecretDependent.decoded(secret).get(DataPlanePart.PASSWORD));
            partUsers.add(secret);
        }
        assertThat(passwords).hasSize(5).doesNotContainNull();
        assertThat(fastUriOf(get(Deployment.class, "orders-proxy"))).startsWith("mongodb://thermocline-proxy:");
        assertThat(fastUriOf(get(Deployment.class, "orders-feeder"))).startsWith("mongodb://thermocline-feeder:");
        assertThat(Serialization.asJson(
                        get(Deployment.class, "orders-proxy").getSpec().getTemplate()))
                .contains("orders-proxy-fast-user")
                .doesNotContain(
                        "orders-feeder-fast-user",
                        "orders-evictor-fast-user",
                        "orders-warmer-fast-user",
                        "\"orders-users\"");

        String uid = stored("orders").getMetadata().getUid();
        // what the data cannot be read without must outlive the resource: no owner reference to garbage-collect it by
        List<Secret> retained = new ArrayList<>(List.of(keyfile, users, peer));
        retained.addAll(partUsers);
        for (Secret kept : retained) {
            assertThat(kept.getMetadata().getOwnerReferences())
                    .as(kept.getMetadata().getName())
                    .isNullOrEmpty();
            assertThat(kept.getMetadata().getLabels()).containsEntry("app.kubernetes.io/instance", "orders");
        }
        // what the drain before deletion needs: out of the garbage collector's reach, mapped back by annotations
        for (HasMetadata holder : List.of(
                sts,
                proxy,
                feeder,
                config,
                get(Service.class, "orders-proxy"),
                get(Service.class, "orders-proxy-peers"),
                get(Service.class, "orders-fast"))) {
            assertThat(holder.getMetadata().getOwnerReferences())
                    .as(holder.getKind())
                    .isNullOrEmpty();
            assertThat(holder.getMetadata().getAnnotations())
                    .as(holder.getKind())
                    .containsEntry(Mappers.DEFAULT_ANNOTATION_FOR_NAME, "orders");
        }
        for (HasMetadata owned : List.of(evictor, warmers.get(0), get(PodDisruptionBudget.class, "orders-fast"))) {
            assertThat(owned.getMetadata().getOwnerReferences())
                    .as(owned.getKind())
                    .anySatisfy(ref -> assertThat(ref.getUid()).isEqualTo(uid));
            assertThat(owned.getMetadata().getLabels()).containsEntry("app.kubernetes.io/instance", "orders");
        }

        awaitStored("orders", c -> {
            assertThat(condition(c, ConditionType.ArchiveReachable).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.VersionCompatible).getReason())
                    .isEqualTo("MatchesArchive");
            assertThat(c.getStatus().fastTierVersion).isEqualTo(FakeArchive.VERSION);
            assertThat(c.getStatus().connectionString).isEqualTo("mongodb://orders-proxy." + ns + ".svc:27017/");
            assertThat(c.getStatus().observedGeneration)
                    .isEqualTo(c.getMetadata().getGeneration());
        });
        assertThat(archive.probedUris()).contains(Clusters.ARCHIVE_URI);
    }

    @Test
    void membersAreReadyOnlyAsPrimaryOrSecondaryGetRecoveryTimeAndHandOverBeforeStopping() {
        ThermoclineCluster c = cluster(ns, "probes");
        c.getSpec().fastTier.resources = new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
                .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("4Gi"))
                .build();
        create(c);
        StatefulSet sts = await().atMost(WAIT).until(() -> get(StatefulSet.class, "probes-fast"), Objects::nonNull);
        Container mongod = sts.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertThat(String.join(" ", mongod.getCommand())).contains("--wiredTigerCacheSizeGB 1.5");
        String readiness = String.join(" ", mongod.getReadinessProbe().getExec().getCommand());
        assertThat(readiness)
                .contains("h.ismaster || h.secondary")
                .contains("quit(1)")
                .contains("mongosh")
                .contains("mongo;");
        assertThat(mongod.getReadinessProbe().getTcpSocket()).isNull();
        assertThat(mongod.getStartupProbe().getPeriodSeconds()
                        * mongod.getStartupProbe().getFailureThreshold())
                .as("seconds a WiredTiger recovery may take before liveness applies")
                .isGreaterThanOrEqualTo(3600);
        assertThat(mongod.getLivenessProbe().getInitialDelaySeconds()).isNull();
        String preStop =
                String.join(" ", mongod.getLifecycle().getPreStop().getExec().getCommand());
        assertThat(preStop).contains("db.isMaster().ismaster").contains("replSetStepDown");
        assertThat(sts.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds())
                .isGreaterThanOrEqualTo(30L);
        assertThat(sts.getSpec().getTemplate().getMetadata().getAnnotations())
                .containsKey("thermocline.io/pod-template-hash");
    }

    @Test
    void anObjectTheApiServerRefusesIsReportedAndTheRestIsStillManaged() {
        mockServer
                .expect()
                .post()
                .withPath("/apis/batch/v1/namespaces/" + ns + "/cronjobs")
                .andReturn(
                        422,
                        new io.fabric8.kubernetes.api.model.StatusBuilder()
                                .withCode(422)
                                .withReason("Invalid")
                                .withMessage(
                                        "CronJob.batch \"reject-evictor\" is invalid: spec.schedule: Invalid value: \"*/10 * * *\"")
                                .build())
                .always();
        create(cluster(ns, "reject"));
        markReadyWhenCreated("reject");
        awaitStored("reject", c -> {
            assertThat(condition(c, ConditionType.ResourcesApplied).getReason()).isEqualTo("ApiRejected");
            assertThat(condition(c, ConditionType.ResourcesApplied).getMessage())
                    .contains("evictor")
                    .contains("spec.schedule");
            assertThat(condition(c, ConditionType.Ready).getReason()).isEqualTo("ApiRejected");
            assertThat(condition(c, ConditionType.FastTierReady).getStatus()).isEqualTo("True");
            assertThat(c.getStatus().phase).isEqualTo("Degraded");
        });
        assertThat(targetsOf("reject")).isNotEmpty();
        edit("reject", c -> c.getSpec().proxy.replicas = 3);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                get(Deployment.class, "reject-proxy").getSpec().getReplicas())
                        .isEqualTo(3));
    }

    @Test
    void growingTheVolumesPatchesThePvcsWhereTheStorageClassExpandsElseSaysWhy() {
        client.storage()
                .v1()
                .storageClasses()
                .resource(new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
                        .withNewMetadata()
                        .withName("grows-" + ns)
                        .endMetadata()
                        .withProvisioner("x")
                        .withAllowVolumeExpansion(true)
                        .build())
                .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        client.storage()
                .v1()
                .storageClasses()
                .resource(new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
                        .withNewMetadata()
                        .withName("fixed-" + ns)
                        .endMetadata()
                        .withProvisioner("x")
                        .withAllowVolumeExpansion(false)
                        .build())
                .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
        create(cluster(ns, "disk"));
        await().atMost(WAIT).until(() -> get(StatefulSet.class, "disk-fast"), Objects::nonNull);
        for (int i = 0; i < 3; i++) { // what the StatefulSet controller would have made
            client.persistentVolumeClaims()
                    .inNamespace(ns)
                    .resource(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder()
                            .withNewMetadata()
                            .withName("data-disk-fast-" + i)
                            .endMetadata()
                            .withNewSpec()
                            .withStorageClassName((i == 2 ? "fixed-" : "grows-") + ns)
                            .withNewResources()
                            .addToRequests("storage", new io.fabric8.kubernetes.api.model.Quantity("10Gi"))
                            .endResources()
                            .endSpec()
                            .build())
                    .create();
        }
        edit("disk", c -> c.getSpec().fastTier.storage.size = "20Gi");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            for (int i = 0; i < 2; i++) {
                assertThat(client.persistentVolumeClaims()
                                .inNamespace(ns)
                                .withName("data-disk-fast-" + i)
                                .get()
                                .getSpec()
                                .getResources()
                                .getRequests()
                                .get("storage"))
                        .hasToString("20Gi");
            }
            ThermoclineCluster c = stored("disk");
            assertThat(condition(c, ConditionType.ResourcesApplied).getReason()).isEqualTo("VolumesNotResized");
            assertThat(condition(c, ConditionType.ResourcesApplied).getMessage())
                    .contains("data-disk-fast-2")
                    .contains("allowVolumeExpansion");
        });
        // the claim template is immutable: it keeps its size, so the StatefulSet update is never refused
        assertThat(get(StatefulSet.class, "disk-fast")
                        .getSpec()
                        .getVolumeClaimTemplates()
                        .get(0)
                        .getSpec()
                        .getResources()
                        .getRequests()
                        .get("storage"))
                .hasToString("10Gi");
        assertThat(client.persistentVolumeClaims()
                        .inNamespace(ns)
                        .withName("data-disk-fast-2")
                        .get()
                        .getSpec()
                        .getResources()
                        .getRequests()
                        .get("storage"))
                .hasToString("10Gi");
    }

    /** Issue 41 item 4: a proxy that is not ready says why in its /health/ready, and ProxyReady and Ready carry its words. */
    @Test
    void aNotReadyProxysOwnCauseIsInProxyReadyAndReady() {
        String cause = "not ready: the archive tier refused the proxy's login: Authentication failed.";
        proxyHealth.notReady("10.1.0.8", cause);
        proxyPod("cause-proxy-a", "10.1.0.7", true);
        proxyPod("cause-proxy-b", "10.1.0.8", false);
        create(cluster(ns, "cause"));
        markReady("cause", 3, 1);
        awaitStored("cause", c -> {
            assertThat(condition(c, ConditionType.ProxyReady).getReason()).isEqualTo("ReplicasNotReady");
            assertThat(condition(c, ConditionType.ProxyReady).getMessage())
                    .isEqualTo("1/2 proxy replicas ready; pod cause-proxy-b: " + cause);
            assertThat(condition(c, ConditionType.Ready).getMessage())
                    .contains("ProxyReady (ReplicasNotReady: pod cause-proxy-b: " + cause + ")");
        });
        assertThat(proxyHealth.asked()).as("a ready pod is not asked").doesNotContain("10.1.0.7");

        // both ready: the cause goes with the condition
        Clusters.markDeploymentReady(client, ns, "cause-proxy", 2);
        awaitStored("cause", c -> {
            assertThat(condition(c, ConditionType.ProxyReady).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.ProxyReady).getMessage()).isEqualTo("2/2 proxy replicas ready");
        });
    }

    @Test
    void statusFollowsPodReadiness() {
        create(cluster(ns, "ready"));
        awaitStored("ready", c -> {
            assertThat(condition(c, ConditionType.FastTierReady).getStatus()).isEqualTo("False");
            // the proxy depends on the replica-set dependent: not created before the set has converged
            assertThat(condition(c, ConditionType.ProxyReady).getReason()).isEqualTo("NotCreated");
            assertThat(get(Deployment.class, "ready-proxy")).isNull();
            assertThat(condition(c, ConditionType.Ready).getStatus()).isEqualTo("False");
            assertThat(c.getStatus().phase).isEqualTo("Progressing");
        });
        markReady("ready", 3, 2);

        awaitStored("ready", c -> {
            assertThat(condition(c, ConditionType.FastTierReady).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.ProxyReady).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.FeederHealthy).getStatus()).isEqualTo("True");
            assertThat(condition(c, ConditionType.Ready).getStatus()).isEqualTo("True");
            assertThat(c.getStatus().phase).isEqualTo("Ready");
            assertThat(c.getStatus().feederLagSeconds).isEqualTo(2L);
            assertThat(c.getStatus().documents.archive).isEqualTo(50_000L);
        });
        assertThat(targetsOf("ready").get(0).members())
                .containsExactly(
                        "ready-fast-0.ready-fast." + ns + ".svc:27017",
                        "ready-fast-1.ready-fast." + ns + ".svc:27017",
                        "ready-fast-2.ready-fast." + ns + ".svc:27017");
        assertThat(targetsOf("ready").get(0).rootPassword()).isNotBlank();

        // as the observer reports a unique index only the archive has
        List<String> gaps = UniqueIndexCoverage.gaps(
                "shop.orders",
                List.of(),
                List.of(new org.bson.Document("name", "email_1")
                        .append("key", new org.bson.Document("email", 1))
                        .append("unique", true)));
        tiering.report(new TieringSnapshot(900L, false, 1L, 1L, gaps));
        Clusters.markFastTierReady(client, ns, "ready", 2);
        awaitStored("ready", c -> {
            assertThat(condition(c, ConditionType.FastTierReady).getReason()).isEqualTo("MembersNotReady");
            assertThat(condition(c, ConditionType.Ready).getMessage()).contains("FastTierReady");
            assertThat(c.getStatus().phase).isEqualTo("Degraded");
        });
        Clusters.markFastTierReady(client, ns, "ready", 3);
        awaitStored("ready", c -> {
            assertThat(condition(c, ConditionType.FeederHealthy).getReason()).isEqualTo("LagTooHigh");
            assertThat(c.getStatus().feederLagSeconds).isEqualTo(900L);
            // unique indexes are enforced across tiers (by the proxy): the warning is about the gap, not "per tier
            // only"
            assertThat(c.getStatus().warnings)
                    .containsExactlyElementsOf(gaps)
                    .singleElement()
                    .asString()
                    .contains("shop.orders: email_1 exists only in the archive");
        });
    }

    /** A resource name with a '.' is a valid object name but no Service name: refused before anything is made from it. */
    @Test
    void aNameThatCannotPrefixAServiceIsAnInvalidSpec() {
        create(cluster(ns, "shop.orders"));
        awaitStored("shop.orders", c -> {
            assertThat(condition(c, ConditionType.Ready).getReason()).isEqualTo("InvalidSpec");
            assertThat(condition(c, ConditionType.Ready).getMessage()).contains("metadata.name shop.orders");
        });
        assertThat(get(StatefulSet.class, "shop.orders-fast")).isNull();
        assertThat(get(Service.class, "shop.orders-proxy")).isNull();
    }

    /** A roll, a scale or a member resyncing must not hide the feeder's lag or dead letters behind "Mirroring". */
    @Test
    void deadLettersAndLagStayReportedWhileTheReplicaSetIsNotConverged() {
        create(cluster(ns, "rolls"));
        ReplicaSetModel model = replicaSet.model(ns, "rolls");
        try (StatefulSetSimulator pods = new StatefulSetSimulator(client, new ClusterLayout("rolls", ns), model)) {
            dataPlaneReady("rolls", 2);
            tiering.report(new TieringSnapshot(
                    7L,
                    true,
                    10L,
                    10L,
                    List.of(),
                    new TieringSnapshot.FeederAlerts(3, "shop.orders _id 7 upsert: E11000", null, false)));
            awaitStored("rolls", c -> {
                assertThat(condition(c, ConditionType.FastTierReady).getStatus())
                        .isEqualTo("True");
                assertThat(condition(c, ConditionType.FeederHealthy).getReason())
                        .isEqualTo("DeadLetters");
                assertThat(c.getStatus().feederLagSeconds).isEqualTo(7L);
            });

            // two of three members down: no primary, the replica set is not converged until they are back
            model.down(new ClusterLayout("rolls", ns).memberHost(0));
            model.down(new ClusterLayout("rolls", ns).memberHost(1));
            tiering.report(new TieringSnapshot(
                    40L,
                    true,
                    10L,
                    10L,
                    List.of(),
                    new TieringSnapshot.FeederAlerts(5, "shop.orders _id 7 upsert: E11000", null, false)));
            awaitStored("rolls", c -> {
                assertThat(condition(c, ConditionType.FastTierReady).getStatus())
                        .isEqualTo("False");
                assertThat(condition(c, ConditionType.FeederHealthy).getReason())
                        .isEqualTo("DeadLetters");
                assertThat(condition(c, ConditionType.FeederHealthy).getMessage())
                        .startsWith("5 mirror write(s)");
                assertThat(c.getStatus().feederLagSeconds).isEqualTo(40L);
            });
        }
    }

    @Test
    void unreachableArchiveIsReportedAndNothingIsCreated() {
        archive.answer(new ArchiveReport.Unusable("Unreachable", "no archive member answered within 5s"));
        create(cluster(ns, "down"));
        awaitStored("down", c -> {
            assertThat(condition(c, ConditionType.ArchiveReachable).getStatus()).isEqualTo("False");
            assertThat(condition(c, ConditionType.ArchiveReachable).getReason()).isEqualTo("Unreachable");
            assertThat(condition(c, ConditionType.VersionCompatible).getStatus())
                    .isEqualTo("Unknown");
            assertThat(condition(c, ConditionType.Ready).getReason()).isEqualTo("ArchiveNotReachable");
            assertThat(c.getStatus().phase).isEqualTo("Pending");
        });
        assertThat(client.v1().events().inNamespace(ns).list().getItems()).anySatisfy(e -> {
            assertThat(e.getReason()).isEqualTo("Unreachable");
            assertThat(e.getMessage()).startsWith("ArchiveReachable is False: ");
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getInvolvedObject().getName()).isEqualTo("down");
        });
        assertThat(get(StatefulSet.class, "down-fast")).isNull();
        assertThat(get(Deployment.class, "down-proxy")).isNull();
    }

    @Test
    void archiveCaIsCheckedAndMountedIntoDataPlanePods() {
        ThermoclineCluster c = cluster(ns, "tls");
        c.getSpec().archive.tls = new io.thermocline.operator.api.v1alpha1.ArchiveSpec.TlsSpec();
        c.getSpec().archive.tls.caSecretRef = new io.thermocline.operator.api.v1alpha1.SecretKeyRef("archive-ca", null);
        create(c);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(
                                condition("tls", ConditionType.ArchiveReachable).getReason())
                        .isEqualTo("CaSecretNotFound"));
        assertThat(get(Deployment.class, "tls-proxy")).isNull();

        client.secrets()
                .inNamespace(ns)
                .resource(Clusters.archiveCaSecret("-----BEGIN CERTIFICATE-----"))
                .create();
        edit("tls", x -> x.getSpec().proxy.replicas = 3);
        Deployment proxy = await().atMost(WAIT).until(() -> get(Deployment.class, "tls-proxy"), Objects::nonNull);
        assertThat(proxy.getSpec().getTemplate().getSpec().getVolumes())
                .extracting(v -> v.getSecret() == null ? null : v.getSecret().getSecretName())
                .contains("archive-ca");
        assertThat(proxy.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getEnv())
                .extracting(e -> e.getValue())
                .contains("/etc/thermocline/archive-ca/ca.crt");
    }

    @Test
    void aFailingReconcileIsReportedInReady() {
        archive.failWith(new IllegalStateException("probe exploded"));
        create(cluster(ns, "boom"));
        awaitStored("boom", c -> {
            assertThat(condition(c, ConditionType.Ready).getReason()).isEqualTo("ReconcileError");
            assertThat(condition(c, ConditionType.Ready).getMessage())
                    .contains("IllegalStateException")
                    .contains("probe exploded");
            assertThat(c.getStatus().observedGeneration)
                    .as("the failure describes this generation")
                    .isEqualTo(c.getMetadata().getGeneration());
            assertThat(c.getStatus().phase).isEqualTo("Degraded");
        });
        edit("boom", x -> x.getSpec().proxy.replicas = 5);
        awaitStored("boom", c -> {
            assertThat(c.getMetadata().getGeneration()).isGreaterThan(1L);
            assertThat(c.getStatus().observedGeneration)
                    .isEqualTo(c.getMetadata().getGeneration());
        });
    }

    @Test
    void missingArchiveSecretNamesTheSecret() {
        ThermoclineCluster c = cluster(ns, "nosecret");
        c.getSpec().archive.uriSecretRef.name = "does-not-exist";
        create(c);
        awaitStored("nosecret", now -> {
            assertThat(condition(now, ConditionType.ArchiveReachable).getReason())
                    .isEqualTo("SecretNotFound");
            assertThat(condition(now, ConditionType.ArchiveReachable).getMessage())
                    .contains(ns + "/does-not-exist");
        });
        // (no probe count here: earlier tests' clusters in other namespaces are still reconciled and probed)
    }

    @Test
    void versionMismatchCreatesNoTieringWorkloads() {
        ThermoclineCluster c = cluster(ns, "pinned");
        c.getSpec().fastTier.version = "6.0.5";
        create(c);
        awaitStored("pinned", now -> {
            assertThat(condition(now, ConditionType.VersionCompatible).getStatus())
                    .isEqualTo("False");
            assertThat(condition(now, ConditionType.VersionCompatible).getReason())
                    .isEqualTo("Mismatch");
            assertThat(condition(now, ConditionType.Ready).getReason()).isEqualTo("VersionIncompatible");
            assertThat(now.getStatus().phase).isEqualTo("Failed");
        });
        assertThat(get(StatefulSet.class, "pinned-fast")).isNull();
        assertThat(get(Deployment.class, "pinned-feeder")).isNull();
        assertThat(warmers()).isEmpty();
    }

    @Test
    void pinnedPatchVersionOfTheArchiveLineIsUsed() {
        ThermoclineCluster c = cluster(ns, "patch");
        c.getSpec().fastTier.version = "7.0.12";
        create(c);
        StatefulSet sts = await().atMost(WAIT).until(() -> get(StatefulSet.class, "patch-fast"), Objects::nonNull);
        assertThat(sts.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
                .isEqualTo("mongo:7.0.12");
    }

    @Test
    void specTheDataPlaneRejectsIsReportedAsInvalidSpec() {
        ThermoclineCluster c = cluster(ns, "badspec");
        c.getSpec().collections.add(new CollectionSpec("shop", "orders", "createdAt", "7d"));
        create(c);
        awaitStored("badspec", now -> {
            assertThat(condition(now, ConditionType.Ready).getReason()).isEqualTo("InvalidSpec");
            assertThat(condition(now, ConditionType.Ready).getMessage())
                    .contains("collections[1]")
                    .contains("shop.orders");
            assertThat(now.getStatus().phase).isEqualTo("Failed");
        });
        assertThat(get(StatefulSet.class, "badspec-fast")).isNull();
    }

    /** Where the API server does not run the CRD's rules (CEL off, an older CRD), the operator refuses the same specs. */
    @Test
    void exposeAndMongodOptionsTheCrdRefusesAreAnInvalidSpecWithoutItsRules() {
        ThermoclineCluster c = cluster(ns, "badexpose");
        c.getSpec().proxy.expose.loadBalancerSourceRanges = List.of("10.0.0.0/8");
        c.getSpec().fastTier.mongodArgs = List.of("--port", "27018");
        create(c);
        awaitStored("badexpose", now -> {
            assertThat(condition(now, ConditionType.Ready).getReason()).isEqualTo("InvalidSpec");
            assertThat(condition(now, ConditionType.Ready).getMessage())
                    .contains("proxy.expose.loadBalancerSourceRanges needs proxy.expose.type LoadBalancer")
                    .contains("fastTier.mongodArgs holds --port");
        });
        assertThat(get(StatefulSet.class, "badexpose-fast")).isNull();
        assertThat(get(Service.class, "badexpose-proxy")).isNull();
    }

    @Test
    void scalingUpAndDownKeepsAMajorityAndThePasswords() {
        create(cluster(ns, "scale"));
        ReplicaSetModel model = replicaSet.model(ns, "scale");
        try (StatefulSetSimulator pods = new StatefulSetSimulator(client, new ClusterLayout("scale", ns), model)) {
            await().atMost(WAIT).until(() -> get(Deployment.class, "scale-proxy"), Objects::nonNull);
            Map<String, String> before = UsersSecretDependent.decoded(get(Secret.class, "scale-users"));
            dataPlaneReady("scale", 2);
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(model.configured()).hasSize(3);
                assertThat(condition("scale", ConditionType.FastTierReady).getStatus())
                        .isEqualTo("True");
                assertThat(stored("scale").getStatus().members).isEqualTo("3/3");
                assertThat(stored("scale").getStatus().replicaSetInitiated).isTrue();
            });

            edit("scale", c -> {
                c.getSpec().fastTier.members = 5;
                c.getSpec().proxy.replicas = 4;
            });
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(get(StatefulSet.class, "scale-fast").getSpec().getReplicas())
                        .isEqualTo(5);
                assertThat(get(Deployment.class, "scale-proxy").getSpec().getReplicas())
                        .isEqualTo(4);
                ThermoclineConfig loaded = ConfigLoader.parse(
                        get(ConfigMap.class, "scale-config").getData().get("thermocline.yaml"),
                        DataPlaneConfig.podEnvironment(Clusters.ARCHIVE_URI, "mongodb://f:27017/"));
                assertThat(loaded.fleet().replicas()).isEqualTo(4);
                assertThat(loaded.fleet().poolSize(loaded.tiers().fast())).isEqualTo(50);
                assertThat(fastUriOf(get(Deployment.class, "scale-proxy"))).contains("scale-fast-4.scale-fast");
                assertThat(model.configured()).hasSize(5);
                assertThat(get(PodDisruptionBudget.class, "scale-fast")
                                .getSpec()
                                .getMaxUnavailable()
                                .getIntVal())
                        .isEqualTo(2);
            });
            // create-only: a new member count changes the pods' URI, never the Secret
            assertThat(UsersSecretDependent.decoded(get(Secret.class, "scale-users")))
                    .isEqualTo(before);

            // the primary is among the members that go
            model.electPrimary(new ClusterLayout("scale", ns).memberHost(4));
            edit("scale", c -> c.getSpec().fastTier.members = 3);
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(get(StatefulSet.class, "scale-fast").getSpec().getReplicas())
                        .isEqualTo(3);
                assertThat(model.configured()).hasSize(3);
                assertThat(condition("scale", ConditionType.FastTierReady).getStatus())
                        .isEqualTo("True");
                assertThat(fastUriOf(get(Deployment.class, "scale-proxy"))).doesNotContain("scale-fast-3.");
            });
            assertThat(model.commands()).contains("stepDown " + new ClusterLayout("scale", ns).memberHost(4));
            assertThat(model.violations()).isEmpty();
        }
    }

    @Test
    void followingTheArchiveToTheNextMajorUpgradesMemberByMemberThenSetsTheFcv() {
        ThermoclineCluster auto = cluster(ns, "upgrade");
        auto.getSpec().fastTier.featureCompatibilityVersion =
                "auto"; // the FCV follows the binary (unset: left as it is)
        create(auto);
        ReplicaSetModel model = replicaSet.model(ns, "upgrade");
        try (StatefulSetSimulator pods = new StatefulSetSimulator(client, new ClusterLayout("upgrade", ns), model)) {
            dataPlaneReady("upgrade", 2);
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(
                                    condition("upgrade", ConditionType.Ready).getStatus())
                            .isEqualTo("True"));
            assertThat(get(StatefulSet.class, "upgrade-fast")
                            .getSpec()
                            .getUpdateStrategy()
                            .getType())
                    .isEqualTo("OnDelete");
            assertThat(stored("upgrade").getStatus().featureCompatibilityVersion)
                    .isEqualTo("7.0");

            archive.answer(new ArchiveReport.Reachable("8.0.4", "archive-rs"));
            awaitStored("upgrade", c -> {
                assertThat(c.getStatus().fastTierVersion).isEqualTo("8.0.4");
                assertThat(c.getStatus().featureCompatibilityVersion).isEqualTo("8.0");
                assertThat(condition(c, ConditionType.Ready).getStatus()).isEqualTo("True");
            });
            ClusterLayout layout = new ClusterLayout("upgrade", ns);
            assertThat(layout.memberHosts(3))
                    .allSatisfy(h -> assertThat(model.version(h)).isEqualTo("8.0.4"));
            assertThat(model.commands())
                    .filteredOn(cmd -> cmd.startsWith("stepDown") || cmd.startsWith("setFCV"))
                    .containsExactly("stepDown " + layout.memberHost(0), "setFCV 8.0");
            assertThat(model.violations()).isEmpty();

            // 8.0 -> 6.0 is a downgrade: refused, and the fast tier keeps running 8.0 while the rest stays managed
            archive.answer(new ArchiveReport.Reachable("6.0.19", "archive-rs"));
            edit("upgrade", c -> c.getSpec().proxy.replicas = 3);
            awaitStored("upgrade", c -> {
                assertThat(condition(c, ConditionType.VersionCompatible).getReason())
                        .isEqualTo("DowngradeRefused");
                assertThat(condition(c, ConditionType.VersionCompatible).getMessage())
                        .contains("8.0.4")
                        .contains("pin");
                assertThat(get(Deployment.class, "upgrade-proxy").getSpec().getReplicas())
                        .isEqualTo(3);
                assertThat(c.getStatus().phase).isEqualTo("Degraded");
            });
            assertThat(FastTierPodsView.image(get(StatefulSet.class, "upgrade-fast")))
                    .isEqualTo("mongo:8.0.4");
        }
    }

    @Test
    void skippingAMajorVersionIsRefusedWithWhatToDo() {
        archive.answer(new ArchiveReport.Reachable("6.0.19", "archive-rs"));
        create(cluster(ns, "skip"));
        markReadyWhenCreated("skip");
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() ->
                        assertThat(stored("skip").getStatus().fastTierVersion).isEqualTo("6.0.19"));
        archive.answer(new ArchiveReport.Reachable("8.0.4", "archive-rs"));
        awaitStored("skip", c -> {
            assertThat(condition(c, ConditionType.VersionCompatible).getReason())
                    .isEqualTo("SkippedMajorVersion");
            assertThat(condition(c, ConditionType.VersionCompatible).getMessage())
                    .contains("7.0.x");
            assertThat(c.getStatus().fastTierVersion).isEqualTo("6.0.19");
        });
        assertThat(FastTierPodsView.image(get(StatefulSet.class, "skip-fast"))).isEqualTo("mongo:6.0.19");
    }

    @Test
    void pauseStopsWritesThenDrainsTheFeederThenStopsIt() {
        create(cluster(ns, "pause"));
        markReadyWhenCreated("pause");
        proxyPods("pause", 2);
        // the archive lacks the last writes: the feeder must keep running until it has them
        tiering.report(new TieringSnapshot(3L, false, 12L, 10L));
        edit("pause", c -> c.getSpec().paused = true);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(get(Deployment.class, "pause-proxy").getSpec().getReplicas())
                    .isZero();
            assertThat(get(CronJob.class, "pause-evictor").getSpec().getSuspend())
                    .isTrue();
            assertThat(condition("pause", ConditionType.Ready).getReason()).isEqualTo("PausingStoppingWrites");
        });
        assertThat(get(Deployment.class, "pause-feeder").getSpec().getReplicas())
                .as("feeder runs while proxies may write")
                .isEqualTo(1);

        client.pods()
                .inNamespace(ns)
                .withLabel("app.kubernetes.io/component", "proxy")
                .delete();
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(condition("pause", ConditionType.Ready).getReason())
                                .isEqualTo("PausingWaitingForFeeder"));
        await().pollDelay(Duration.ofSeconds(2)).atMost(WAIT).until(() -> true);
        assertThat(get(Deployment.class, "pause-feeder").getSpec().getReplicas())
                .as("feeder runs until drained")
                .isEqualTo(1);
        assertThat(stored("pause").getStatus().phase).isEqualTo("Progressing");

        tiering.report(new TieringSnapshot(0L, true, 12L, 12L));
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(get(Deployment.class, "pause-feeder").getSpec().getReplicas())
                    .isZero();
            assertThat(warmers())
                    .singleElement()
                    .satisfies(j -> assertThat(j.getSpec().getSuspend()).isTrue());
            ThermoclineCluster c = stored("pause");
            assertThat(condition(c, ConditionType.Ready).getReason()).isEqualTo("Paused");
            assertThat(condition(c, ConditionType.ProxyReady).getReason()).isEqualTo("Paused");
            assertThat(condition(c, ConditionType.FeederHealthy).getReason()).isEqualTo("Paused");
            assertThat(c.getStatus().phase).isEqualTo("Paused");
        });
        assertThat(client.v1().events().inNamespace(ns).list().getItems())
                .extracting(e -> e.getReason())
                .containsOnlyOnce("PausingStoppingWrites", "PausingWaitingForFeeder");
        assertThat(get(StatefulSet.class, "pause-fast").getSpec().getReplicas()).isEqualTo(3);

        edit("pause", c -> c.getSpec().paused = false);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(get(Deployment.class, "pause-proxy").getSpec().getReplicas())
                    .isEqualTo(2);
            assertThat(get(Deployment.class, "pause-feeder").getSpec().getReplicas())
                    .isEqualTo(1);
            assertThat(get(CronJob.class, "pause-evictor").getSpec().getSuspend())
                    .isFalse();
        });
    }

    @Test
    void aWarmerJobThatFailedAfterItsRetriesIsReportedOnceAndRunsAgainWhenDeleted() {
        create(cluster(ns, "cold"));
        markReadyWhenCreated("cold");
        Job first = await().atMost(WAIT)
                .until(() -> warmers().isEmpty() ? null : warmers().get(0), Objects::nonNull);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(condition("cold", ConditionType.Warmed).getReason())
                                .isEqualTo("Warming"));
        setJobCondition(
                first.getMetadata().getName(),
                "Failed",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            var warmed = condition("cold", ConditionType.Warmed);
            assertThat(warmed.getStatus()).isEqualTo("False");
            assertThat(warmed.getReason()).isEqualTo("WarmerFailed");
            assertThat(warmed.getMessage())
                    .contains(first.getMetadata().getName())
                    .contains("BackoffLimitExceeded")
                    .contains("kubectl delete job");
        });
        await().pollDelay(Duration.ofSeconds(3)).atMost(WAIT).until(() -> true); // several reconciles later
        List<io.fabric8.kubernetes.api.model.Event> events =
                client.v1().events().inNamespace(ns).list().getItems();
        assertThat(events)
                .filteredOn(e -> "WarmerFailed".equals(e.getReason()))
                .singleElement()
                .satisfies(e -> assertThat(e.getType()).isEqualTo("Warning"));
        // every reason is CamelCase, and no Event was sent twice
        assertThat(events).allSatisfy(e -> assertThat(e.getReason()).matches("[A-Z][a-z]+([A-Z][a-z0-9]*)*"));
        assertThat(events.stream()
                        .map(e -> e.getReason() + "|" + e.getMessage())
                        .toList())
                .doesNotHaveDuplicates();

        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns)
                .withName(first.getMetadata().getName())
                .delete();
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(warmers())
                    .singleElement()
                    .satisfies(j -> assertThat(j.getMetadata().getUid())
                            .isNotEqualTo(first.getMetadata().getUid()));
            assertThat(condition("cold", ConditionType.Warmed).getReason()).isEqualTo("Warming");
        });
        setJobCondition(first.getMetadata().getName(), "Complete", null, null);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(
                        () -> assertThat(condition("cold", ConditionType.Warmed).getStatus())
                                .isEqualTo("True"));
    }

    private void setJobCondition(String job, String type, String reason, String message) {
        client.batch().v1().jobs().inNamespace(ns).withName(job).editStatus(j -> {
            j.setStatus(new io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder()
                    .addNewCondition()
                    .withType(type)
                    .withStatus("True")
                    .withReason(reason)
                    .withMessage(message)
                    .endCondition()
                    .build());
            return j;
        });
    }

    /** A running proxy pod of cluster NAME (pod name NAME-proxy-x) at {@code ip}, ready or not. */
    private void proxyPod(String pod, String ip, boolean ready) {
        String cluster = pod.substring(0, pod.indexOf("-proxy-"));
        client.pods()
                .inNamespace(ns)
                .resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                        .withNewMetadata()
                        .withName(pod)
                        .withLabels(
                                Map.of("app.kubernetes.io/instance", cluster, "app.kubernetes.io/component", "proxy"))
                        .endMetadata()
                        .withNewSpec()
                        .addNewContainer()
                        .withName("proxy")
                        .withImage("x")
                        .endContainer()
                        .endSpec()
                        .build())
                .create();
        client.pods().inNamespace(ns).withName(pod).editStatus(p -> {
            p.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder()
                    .withPhase("Running")
                    .withPodIP(ip)
                    .addNewCondition()
                    .withType("Ready")
                    .withStatus(ready ? "True" : "False")
                    .endCondition()
                    .build());
            return p;
        });
    }

    private void proxyPods(String name, int count) {
        for (int i = 0; i < count; i++) {
            client.pods()
                    .inNamespace(ns)
                    .resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                            .withNewMetadata()
                            .withName(name + "-proxy-" + i)
                            .withLabels(
                                    Map.of("app.kubernetes.io/instance", name, "app.kubernetes.io/component", "proxy"))
                            .endMetadata()
                            .withNewSpec()
                            .addNewContainer()
                            .withName("proxy")
                            .withImage("x")
                            .endContainer()
                            .endSpec()
                            .build())
                    .create();
        }
    }

    @Test
    void growingAWindowStartsANewWarmerRun() {
        create(cluster(ns, "warm"));
        String first = await().atMost(WAIT)
                .until(
                        () -> warmers().isEmpty()
                                ? null
                                : warmers().get(0).getMetadata().getName(),
                        Objects::nonNull);
        edit("warm", c -> c.getSpec().collections.get(0).hotWindow = "60d");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            List<Job> jobs = warmers();
            assertThat(jobs)
                    .singleElement()
                    .satisfies(j -> assertThat(j.getMetadata().getName()).isNotEqualTo(first));
            assertThat(stored("warm").getStatus().warmerJob)
                    .isEqualTo(jobs.get(0).getMetadata().getName());
        });
    }

    @Test
    void secondReconcileChangesNothing() {
        create(cluster(ns, "idem"));
        markReadyWhenCreated("idem");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(condition("idem", ConditionType.Ready).getStatus()).isEqualTo("True");
            assertThat(stored("idem").getStatus().documents)
                    .as("the tiering poller's first snapshot is in")
                    .isNotNull();
        });
        Map<String, String> before = resourceVersions("idem");
        StatefulSet stsBefore = get(StatefulSet.class, "idem-fast");
        int probes = archive.probes();

        // a status-only change of a watched object triggers a reconcile without changing what is desired
        client.apps().statefulSets().inNamespace(ns).withName("idem-fast").editStatus(s -> {
            s.getStatus().setCurrentRevision("rev-" + UUID.randomUUID());
            return s;
        });
        await().atMost(WAIT).until(() -> archive.probes() > probes);
        await().pollDelay(Duration.ofSeconds(1)).atMost(WAIT).until(() -> true);

        Map<String, String> after = resourceVersions("idem");
        // the StatefulSet's own version moved with the status edit above; its spec must not have
        after.remove("StatefulSet/idem-fast");
        before.remove("StatefulSet/idem-fast");
        assertThat(after).isEqualTo(before);
        assertThat(get(StatefulSet.class, "idem-fast").getSpec()).isEqualTo(stsBefore.getSpec());
    }

    @Test
    void deletionKeepsVolumesByDefaultAndRemovesTheResource() {
        create(cluster(ns, "gone"));
        await().atMost(WAIT).until(() -> get(StatefulSet.class, "gone-fast"), Objects::nonNull);
        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("gone")
                .delete();
        await().atMost(WAIT).until(() -> stored("gone") == null);
    }

    @Test
    void recreatingARetainedClusterResumesWithTheSameCredentials() {
        create(cluster(ns, "keep"));
        markReadyWhenCreated("keep");
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(targetsOf("keep")).isNotEmpty());
        Map<String, String> users = UsersSecretDependent.decoded(get(Secret.class, "keep-users"));
        String keyfile = get(Secret.class, "keep-keyfile").getData().get("keyfile");
        String uid = stored("keep").getMetadata().getUid();

        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("keep")
                .delete();
        await().atMost(WAIT).until(() -> stored("keep") == null);
        collectGarbageOwnedBy(uid);
        assertThat(get(Secret.class, "keep-users"))
                .as("users Secret kept beside the retained volumes")
                .isNotNull();
        assertThat(get(Secret.class, "keep-keyfile"))
                .as("keyfile Secret kept beside the retained volumes")
                .isNotNull();
        assertThat(get(StatefulSet.class, "keep-fast")).isNull();

        replicaSet.reset();
        create(cluster(ns, "keep"));
        markReadyWhenCreated("keep");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(targetsOf("keep")).isNotEmpty();
            assertThat(condition("keep", ConditionType.FastTierReady).getStatus())
                    .isEqualTo("True");
        });
        // the kept data knows only the old passwords: the operator and the data plane must use them
        assertThat(targetsOf("keep")).isNotEmpty().allSatisfy(t -> {
            assertThat(t.rootPassword()).isEqualTo(users.get(UsersSecretDependent.ROOT_PASSWORD));
            assertThat(t.users().get(0).password()).isEqualTo(users.get(UsersSecretDependent.DATA_PLANE_PASSWORD));
        });
        assertThat(UsersSecretDependent.decoded(get(Secret.class, "keep-users")))
                .isEqualTo(users);
        assertThat(get(Secret.class, "keep-keyfile").getData().get("keyfile")).isEqualTo(keyfile);
    }

    @Test
    void anExistingUsersSecretIsNeverRewritten() {
        // as an earlier operator left it (with its fast-uri key), before the resource is created again
        Map<String, String> kept = Map.of(
                UsersSecretDependent.ROOT_USERNAME,
                "thermocline-root",
                UsersSecretDependent.ROOT_PASSWORD,
                "kept-root",
                UsersSecretDependent.DATA_PLANE_USERNAME,
                "thermocline-data",
                UsersSecretDependent.DATA_PLANE_PASSWORD,
                "kept-data",
                "fast-uri",
                "mongodb://old:27017/");
        client.secrets()
                .inNamespace(ns)
                .resource(new io.fabric8.kubernetes.api.model.SecretBuilder()
                        .withNewMetadata()
                        .withName("stay-users")
                        .withNamespace(ns)
                        .addToLabels("app.kubernetes.io/managed-by", "thermocline-operator")
                        .addToLabels("app.kubernetes.io/instance", "stay")
                        .addToAnnotations(Mappers.DEFAULT_ANNOTATION_FOR_NAME, "stay")
                        .addToAnnotations(Mappers.DEFAULT_ANNOTATION_FOR_NAMESPACE, ns)
                        .addToAnnotations(
                                Mappers.DEFAULT_ANNOTATION_FOR_PRIMARY_TYPE,
                                GroupVersionKind.gvkFor(ThermoclineCluster.class)
                                        .toGVKString())
                        .endMetadata()
                        .withData(base64(kept))
                        .build())
                .create();
        create(cluster(ns, "stay"));
        markReadyWhenCreated("stay");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(targetsOf("stay")).isNotEmpty();
            assertThat(fastUriOf(get(Deployment.class, "stay-proxy"))).contains("stay-fast-2.stay-fast");
        });
        assertThat(targetsOf("stay"))
                .allSatisfy(t -> assertThat(t.users().get(0).password()).isEqualTo("kept-data"));
        assertThat(UsersSecretDependent.decoded(get(Secret.class, "stay-users")))
                .isEqualTo(kept);
    }

    @Test
    void secretsAnEarlierOperatorOwnerReferencedLoseTheReference() {
        create(cluster(ns, "legacy"));
        await().atMost(WAIT)
                .until(() -> get(Secret.class, "legacy-users") != null && get(Secret.class, "legacy-keyfile") != null);
        ThermoclineCluster owner = stored("legacy");
        Map<String, String> users = UsersSecretDependent.decoded(get(Secret.class, "legacy-users"));
        for (String name :
                List.of("legacy-users", "legacy-keyfile")) { // as the operator before retained Secrets made them
            client.secrets().inNamespace(ns).withName(name).edit(s -> {
                s.getMetadata()
                        .setOwnerReferences(
                                new ArrayList<>(List.of(new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
                                        .withApiVersion(owner.getApiVersion())
                                        .withKind(owner.getKind())
                                        .withName("legacy")
                                        .withUid(owner.getMetadata().getUid())
                                        .withController(true)
                                        .build())));
                return s;
            });
        }
        await().atMost(WAIT).untilAsserted(() -> {
            for (String name : List.of("legacy-users", "legacy-keyfile")) {
                assertThat(get(Secret.class, name).getMetadata().getOwnerReferences())
                        .as(name)
                        .isNullOrEmpty();
            }
        });
        assertThat(UsersSecretDependent.decoded(get(Secret.class, "legacy-users")))
                .as("same passwords")
                .isEqualTo(users);
    }

    @Test
    void deletionStopsWritesBeforeWaitingForTheFeeder() {
        create(cluster(ns, "stop"));
        markReadyWhenCreated("stop");
        for (int i = 0; i < 2; i++) {
            client.pods()
                    .inNamespace(ns)
                    .resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                            .withNewMetadata()
                            .withName("stop-proxy-" + i)
                            .withLabels(Map.of(
                                    "app.kubernetes.io/instance", "stop", "app.kubernetes.io/component", "proxy"))
                            .endMetadata()
                            .withNewSpec()
                            .addNewContainer()
                            .withName("proxy")
                            .withImage("x")
                            .endContainer()
                            .endSpec()
                            .build())
                    .create();
        }
        // the archive holds everything right now, but a proxy pod can still accept a write
        tiering.report(new TieringSnapshot(0L, true, 10L, 10L));

        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("stop")
                .delete();
        await().atMost(WAIT)
                .until(() -> get(Deployment.class, "stop-proxy").getSpec().getReplicas() == 0);
        await().pollDelay(Duration.ofSeconds(2)).atMost(WAIT).until(() -> true);
        assertThat(stored("stop"))
                .as("held while proxy pods may still take writes")
                .isNotNull();

        tiering.report(new TieringSnapshot(3L, false, 12L, 10L));
        client.pods()
                .inNamespace(ns)
                .withLabel("app.kubernetes.io/component", "proxy")
                .delete();
        await().pollDelay(Duration.ofSeconds(2)).atMost(WAIT).until(() -> true);
        assertThat(stored("stop"))
                .as("held until the feeder mirrored the last writes")
                .isNotNull();
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                client.v1().events().inNamespace(ns).list().getItems())
                        .extracting(e -> e.getReason())
                        .contains("DeletionStoppingWrites", "DeletionWaitingForFeeder"));

        tiering.report(new TieringSnapshot(0L, true, 12L, 12L));
        await().atMost(WAIT).until(() -> stored("stop") == null);
        assertThat(get(Secret.class, "stop-users"))
                .as("Retain keeps the credentials")
                .isNotNull();
    }

    @Test
    void deletionWithVolumeDeletionWaitsUntilTheFeederHasMirroredEverything() {
        ThermoclineCluster c = cluster(ns, "drain");
        c.getSpec().fastTier.storage.retentionPolicy = "Delete";
        create(c);
        StatefulSet sts = await().atMost(WAIT).until(() -> get(StatefulSet.class, "drain-fast"), Objects::nonNull);
        assertThat(sts.getSpec().getPersistentVolumeClaimRetentionPolicy().getWhenDeleted())
                .as("the operator deletes the volumes after the drain, never the StatefulSet controller")
                .isEqualTo("Retain");
        await().atMost(WAIT)
                .until(() -> stored("drain").getMetadata().getFinalizers() != null
                        && !stored("drain").getMetadata().getFinalizers().isEmpty());
        tiering.report(new TieringSnapshot(40L, false, 10L, 5L));

        client.resources(ThermoclineCluster.class)
                .inNamespace(ns)
                .withName("drain")
                .delete();
        await().pollDelay(Duration.ofSeconds(2)).atMost(WAIT).until(() -> true);
        assertThat(stored("drain")).isNotNull();
        assertThat(stored("drain").getMetadata().getDeletionTimestamp()).isNotNull();

        tiering.report(new TieringSnapshot(0L, true, 10L, 15L));
        await().atMost(Duration.ofSeconds(30)).until(() -> stored("drain") == null);
        assertThat(get(Secret.class, "drain-users"))
                .as("Delete removes the credentials with the volumes")
                .isNull();
        assertThat(get(Secret.class, "drain-keyfile")).isNull();
    }

    /** What Kubernetes' garbage collector does and the mock API server does not: delete what the gone owner owned. */
    private void collectGarbageOwnedBy(String uid) {
        for (Class<? extends HasMetadata> kind : List.of(
                Secret.class,
                ConfigMap.class,
                Service.class,
                StatefulSet.class,
                Deployment.class,
                CronJob.class,
                Job.class,
                PodDisruptionBudget.class)) {
            for (HasMetadata o : client.resources(kind).inNamespace(ns).list().getItems()) {
                if (o.getMetadata().getOwnerReferences() != null
                        && o.getMetadata().getOwnerReferences().stream().anyMatch(r -> uid.equals(r.getUid()))) {
                    client.resource(o).delete();
                }
            }
        }
        await().atMost(WAIT).until(() -> get(StatefulSet.class, "keep-fast") == null);
    }

    /** What the operator asked of this test's replica set (the operator still reconciles earlier tests' clusters). */
    private List<io.thermocline.operator.fasttier.ReplicaSetTarget> targetsOf(String name) {
        return replicaSet.targets().stream()
                .filter(t -> t.replicaSetName().equals(name + "-fast")
                        && t.members().get(0).contains("." + ns + "."))
                .toList();
    }

    private static Map<String, String> base64(
            Map<String, String> values) { // the mock server does not turn stringData into data
        Map<String, String> out = new java.util.HashMap<>();
        values.forEach((k, v) -> out.put(
                k, java.util.Base64.getEncoder().encodeToString(v.getBytes(java.nio.charset.StandardCharsets.UTF_8))));
        return out;
    }

    private static String fastUriOf(Deployment deployment) {
        return deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
                .filter(e -> e.getName().equals(DataPlaneConfig.FAST_URI_ENV))
                .findFirst()
                .orElseThrow()
                .getValue();
    }

    private List<Job> warmers() {
        return client.batch().v1().jobs().inNamespace(ns).list().getItems();
    }

    private void markReadyWhenCreated(String name) {
        await().atMost(WAIT).until(() -> get(Deployment.class, name + "-feeder"), Objects::nonNull);
        markReady(name, 3, 2);
    }

    private void markReady(String name, int members, int proxies) {
        await().atMost(WAIT).until(() -> get(Deployment.class, name + "-feeder"), Objects::nonNull);
        await().atMost(WAIT)
                .until(() -> get(Deployment.class, name + "-proxy"), Objects::nonNull); // created independently
        Clusters.markDeploymentReady(client, ns, name + "-proxy", proxies);
        Clusters.markDeploymentReady(client, ns, name + "-feeder", 1);
        Clusters.markFastTierReady(client, ns, name, members);
    }

    /** Proxy and feeder Deployments ready; the fast tier is left to a {@link StatefulSetSimulator}. */
    private void dataPlaneReady(String name, int proxies) {
        await().atMost(WAIT).until(() -> get(Deployment.class, name + "-feeder"), Objects::nonNull);
        Clusters.markDeploymentReady(client, ns, name + "-proxy", proxies);
        Clusters.markDeploymentReady(client, ns, name + "-feeder", 1);
    }

    private Map<String, String> resourceVersions(String name) {
        Map<String, String> versions = new HashMap<>();
        List<HasMetadata> objects = new ArrayList<>();
        objects.add(stored(name));
        objects.add(get(StatefulSet.class, name + "-fast"));
        objects.add(get(Deployment.class, name + "-proxy"));
        objects.add(get(Deployment.class, name + "-feeder"));
        objects.add(get(Service.class, name + "-proxy"));
        objects.add(get(Service.class, name + "-proxy-peers"));
        objects.add(get(Service.class, name + "-fast"));
        objects.add(get(ConfigMap.class, name + "-config"));
        objects.add(get(Secret.class, name + "-users"));
        objects.add(get(Secret.class, name + "-keyfile"));
        objects.add(get(CronJob.class, name + "-evictor"));
        objects.add(get(PodDisruptionBudget.class, name + "-proxy"));
        objects.add(get(PodDisruptionBudget.class, name + "-fast"));
        objects.addAll(warmers());
        for (HasMetadata o : objects) {
            versions.put(
                    o.getKind() + "/" + o.getMetadata().getName(),
                    o.getMetadata().getResourceVersion());
        }
        return versions;
    }
}
