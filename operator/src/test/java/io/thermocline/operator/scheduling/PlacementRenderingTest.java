package io.thermocline.operator.scheduling;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraintBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.ExposeSpec;
import io.thermocline.operator.api.v1alpha1.PodPlacement;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.fakes.RenderedCluster;
import io.thermocline.operator.fasttier.FastTierStatefulSetDependent;
import io.thermocline.operator.fasttier.MongodArgs;
import io.thermocline.operator.fasttier.tls.FastTierTls;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.proxy.ProxyDeploymentDependent;
import io.thermocline.operator.proxy.ProxyServiceDependent;
import io.thermocline.operator.tiering.EvictorCronJobDependent;
import io.thermocline.operator.tiering.FeederDeploymentDependent;
import io.thermocline.operator.tiering.WarmerJobDependent;
import io.thermocline.operator.workflow.DesiredCluster;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Issue 44 item 2: the proxy Service as spec.proxy.expose says, each component's pods where its spec puts them, mongod's options. */
@Timeout(30)
class PlacementRenderingTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");

    @Test
    void theProxyServiceIsInternalUnlessExposed() {
        Service service = service(desired(spec()));
        assertThat(service.getSpec().getType()).isEqualTo("ClusterIP");
        assertThat(service.getSpec().getLoadBalancerSourceRanges()).isNullOrEmpty();
        assertThat(service.getSpec().getExternalTrafficPolicy()).isNull();
        assertThat(service.getMetadata().getAnnotations()).isNullOrEmpty();
    }

    @Test
    void anExposedProxyServiceCarriesTypeAnnotationsSourceRangesAndTrafficPolicy() {
        ThermoclineClusterSpec spec = spec();
        spec.proxy.expose.type = "LoadBalancer";
        spec.proxy.expose.annotations = Map.of("service.beta.kubernetes.io/aws-load-balancer-scheme", "internal");
        spec.proxy.expose.loadBalancerSourceRanges = List.of("10.0.0.0/8", "2001:db8::/32");
        spec.proxy.expose.externalTrafficPolicy = "Local";
        Service service = service(desired(spec));
        assertThat(service.getSpec().getType()).isEqualTo("LoadBalancer");
        assertThat(service.getMetadata().getAnnotations())
                .containsEntry("service.beta.kubernetes.io/aws-load-balancer-scheme", "internal");
        assertThat(service.getMetadata().getLabels()).containsEntry("app.kubernetes.io/component", "proxy");
        assertThat(service.getSpec().getLoadBalancerSourceRanges()).containsExactly("10.0.0.0/8", "2001:db8::/32");
        assertThat(service.getSpec().getExternalTrafficPolicy()).isEqualTo("Local");
        assertThat(service.getSpec().getSelector()).isEqualTo(LAYOUT.selector("proxy"));

        spec.proxy.expose.type = "NodePort";
        spec.proxy.expose.loadBalancerSourceRanges = List.of();
        assertThat(service(desired(spec)).getSpec().getType()).isEqualTo("NodePort");
    }

    @Test
    void exposeRulesRefuseWhatTheApiServerWouldRefuseLater() {
        record Case(String type, List<String> ranges, String policy, String problem) {}
        for (Case c : List.of(
                new Case("ClusterIP", List.of(), null, null),
                new Case("LoadBalancer", List.of("10.0.0.0/8", "192.168.1.7/32", "fd00::/8"), "Local", null),
                new Case("NodePort", List.of(), "Cluster", null),
                new Case("ClusterIP", List.of("10.0.0.0/8"), null, "needs proxy.expose.type LoadBalancer"),
                new Case("NodePort", List.of("10.0.0.0/8"), null, "needs proxy.expose.type LoadBalancer"),
                new Case("ClusterIP", List.of(), "Local", "needs proxy.expose.type NodePort or LoadBalancer"),
                new Case("LoadBalancer", List.of("10.0.0.0"), null, "not a CIDR"),
                new Case("LoadBalancer", List.of("office"), null, "not a CIDR"))) {
            ExposeSpec expose = new ExposeSpec();
            expose.type = c.type();
            expose.loadBalancerSourceRanges = c.ranges();
            expose.externalTrafficPolicy = c.policy();
            if (c.problem() == null) {
                assertThat(expose.problems()).as(c.toString()).isEmpty();
            } else {
                assertThat(expose.problems())
                        .as(c.toString())
                        .anySatisfy(p -> assertThat(p).contains(c.problem()));
            }
        }
    }

    @Test
    void eachComponentsPodsArePlacedAsItsOwnSpecSays() {
        ThermoclineClusterSpec spec = spec();
        place(spec.proxy, "proxy");
        place(spec.feeder, "feeder");
        place(spec.evictor, "evictor");
        place(spec.warmer, "warmer");
        place(spec.fastTier, "fast");
        DesiredCluster desired = desired(spec);
        Map<String, PodSpec> pods = Map.of(
                "proxy", proxy(desired).getSpec().getTemplate().getSpec(),
                "feeder", feeder(desired).getSpec().getTemplate().getSpec(),
                "evictor",
                        evictor(desired)
                                .getSpec()
                                .getJobTemplate()
                                .getSpec()
                                .getTemplate()
                                .getSpec(),
                "warmer", warmer(desired).getSpec().getTemplate().getSpec(),
                "fast", fastTier(desired).getSpec().getTemplate().getSpec());
        Map<String, String> components = Map.of(
                "proxy", "proxy", "feeder", "feeder", "evictor", "evictor", "warmer", "warmer", "fast", "fast-tier");
        pods.forEach((name, pod) -> {
            assertThat(pod.getNodeSelector()).as(name).containsExactly(Map.entry("pool", name));
            assertThat(pod.getTolerations())
                    .as(name)
                    .singleElement()
                    .satisfies(t -> assertThat(t.getKey()).isEqualTo("dedicated-" + name));
            assertThat(pod.getPriorityClassName()).as(name).isEqualTo(name + "-priority");
            assertThat(pod.getAffinity()
                            .getNodeAffinity()
                            .getRequiredDuringSchedulingIgnoredDuringExecution()
                            .getNodeSelectorTerms()
                            .get(0)
                            .getMatchExpressions()
                            .get(0)
                            .getValues())
                    .as(name)
                    .containsExactly(name + "-zone");
            assertThat(pod.getTopologySpreadConstraints()).as(name).hasSize(2);
            // the constraint that names no pods counts this component's own, not every pod (an empty selector counts
            // none)
            assertThat(pod.getTopologySpreadConstraints()
                            .get(0)
                            .getLabelSelector()
                            .getMatchLabels())
                    .as(name)
                    .isEqualTo(LAYOUT.selector(components.get(name)));
            assertThat(pod.getTopologySpreadConstraints()
                            .get(1)
                            .getLabelSelector()
                            .getMatchLabels())
                    .as(name)
                    .containsExactly(Map.entry("team", "db"));
        });
    }

    /** Without placement fields nothing new appears in a template: an operator upgrade rolls no pod for them. */
    @Test
    void aSpecWithoutPlacementAddsNothingToThePodTemplates() {
        DesiredCluster desired = desired(spec());
        for (Function<DesiredCluster, Object> template : List.<Function<DesiredCluster, Object>>of(
                d -> fastTier(d).getSpec().getTemplate(),
                d -> proxy(d).getSpec().getTemplate(),
                d -> feeder(d).getSpec().getTemplate())) {
            String json = Serialization.asJson(template.apply(desired));
            assertThat(json)
                    .doesNotContain("priorityClassName")
                    .doesNotContain("topologySpreadConstraints")
                    .doesNotContain("tolerations")
                    .doesNotContain("nodeSelector");
        }
        // the fast tier keeps its own default: one member per node
        PodSpec fast = fastTier(desired).getSpec().getTemplate().getSpec();
        assertThat(fast.getAffinity().getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution())
                .hasSize(1);
        assertThat(proxy(desired).getSpec().getTemplate().getSpec().getAffinity())
                .isNull();
    }

    @Test
    void mongodOptionsReachMongodAsOneWordEachAndNeverTheShell() {
        ThermoclineClusterSpec spec = spec();
        spec.fastTier.mongodArgs =
                List.of("--setParameter", "diagnosticDataCollectionEnabled=false", "--slowms", "200", "it's $(reboot)");
        StatefulSet sts = fastTier(desired(spec));
        String command = sts.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> "mongod".equals(c.getName()))
                .findFirst()
                .orElseThrow()
                .getCommand()
                .get(2);
        assertThat(command)
                .endsWith(
                        " '--setParameter' 'diagnosticDataCollectionEnabled=false' '--slowms' '200' 'it'\\''s $(reboot)'")
                .contains("--replSet orders-fast");
        String withoutArgs = fastTier(desired(spec()))
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getAnnotations()
                .get(FastTierStatefulSetDependent.TEMPLATE_HASH);
        assertThat(sts.getSpec()
                        .getTemplate()
                        .getMetadata()
                        .getAnnotations()
                        .get(FastTierStatefulSetDependent.TEMPLATE_HASH))
                .as("a change rolls the members")
                .isNotEqualTo(withoutArgs);
    }

    @Test
    void mongodOptionsTheOperatorSetsAreRefused() {
        for (String owned : List.of(
                "--port",
                "--port=27018",
                "--replSet",
                "--bind_ip",
                "--bind_ip_all",
                "--keyFile",
                "--tlsMode",
                "--tlsCertificateKeyFile=/x",
                "--sslMode",
                "--dbpath",
                "--config",
                "--fork",
                "--logpath",
                "--auth",
                "--noauth",
                "--storageEngine",
                "--wiredTigerCacheSizeGB",
                "--clusterAuthMode",
                "--transitionToAuth")) {
            assertThat(MongodArgs.problems(List.of(owned)))
                    .as(owned)
                    .singleElement()
                    .satisfies(p -> assertThat(p).contains(owned).contains("operator sets itself"));
        }
        for (String free : List.of(
                "--setParameter",
                "x=y",
                "--slowms",
                "200",
                "--oplogSize",
                "--profile",
                "--quiet",
                "--wiredTigerCollectionBlockCompressor",
                "--ipv6",
                "--maxConns",
                "--portless")) {
            assertThat(MongodArgs.problems(List.of(free))).as(free).isEmpty();
        }
    }

    /** The production sample as a user applies it: exposed through an internal load balancer, spread over zones. */
    @Test
    void theProductionSampleIsExposedAndSpreadAsItsCommentsSay() throws java.io.IOException {
        ThermoclineCluster sample = Serialization.unmarshal(
                java.nio.file.Files.readString(java.nio.file.Path.of("..", "examples", "samples", "production.yaml")),
                ThermoclineCluster.class);
        ThermoclineClusterSpec spec = sample.getSpec();
        assertThat(spec.proxy.expose.problems()).isEmpty();
        assertThat(MongodArgs.problems(spec.fastTier.mongodArgs)).isEmpty();
        ClusterLayout layout = new ClusterLayout(sample.getMetadata().getName(), "shop");
        DesiredCluster desired = RenderedCluster.desired(layout, spec, "200Gi", FastTierTls.OFF);
        Service service = service(desired);
        assertThat(service.getSpec().getType()).isEqualTo("LoadBalancer");
        assertThat(service.getSpec().getLoadBalancerSourceRanges()).containsExactly("10.20.0.0/16");
        assertThat(proxy(desired).getSpec().getTemplate().getSpec().getTopologySpreadConstraints())
                .singleElement()
                .satisfies(
                        c -> assertThat(c.getLabelSelector().getMatchLabels()).isEqualTo(layout.selector("proxy")));
        assertThat(fastTier(desired)
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getCommand()
                        .get(2))
                .endsWith("'--slowms' '200' '--setParameter' 'transactionLifetimeLimitSeconds=120'");
    }

    private static void place(PodPlacement placement, String name) {
        placement.nodeSelector = Map.of("pool", name);
        placement.tolerations = List.of(new TolerationBuilder()
                .withKey("dedicated-" + name)
                .withOperator("Exists")
                .withEffect("NoSchedule")
                .build());
        placement.priorityClassName = name + "-priority";
        placement.affinity = new AffinityBuilder()
                .withNewNodeAffinity()
                .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .addNewNodeSelectorTerm()
                .addNewMatchExpression()
                .withKey("zone")
                .withOperator("In")
                .withValues(name + "-zone")
                .endMatchExpression()
                .endNodeSelectorTerm()
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .endNodeAffinity()
                .build();
        placement.topologySpreadConstraints = List.of(
                new TopologySpreadConstraintBuilder()
                        .withMaxSkew(1)
                        .withTopologyKey("topology.kubernetes.io/zone")
                        .withWhenUnsatisfiable("ScheduleAnyway")
                        .build(),
                new TopologySpreadConstraintBuilder()
                        .withMaxSkew(1)
                        .withTopologyKey("kubernetes.io/hostname")
                        .withWhenUnsatisfiable("DoNotSchedule")
                        .withNewLabelSelector()
                        .withMatchLabels(Map.of("team", "db"))
                        .endLabelSelector()
                        .build());
    }

    private static Service service(DesiredCluster d) {
        return render(new ProxyServiceDependent(), d);
    }

    private static Deployment proxy(DesiredCluster d) {
        return render(new ProxyDeploymentDependent(), d);
    }

    private static Deployment feeder(DesiredCluster d) {
        return render(new FeederDeploymentDependent(), d);
    }

    private static CronJob evictor(DesiredCluster d) {
        return render(new EvictorCronJobDependent(), d);
    }

    private static Job warmer(DesiredCluster d) {
        return render(new WarmerJobDependent(), d);
    }

    private static StatefulSet fastTier(DesiredCluster d) {
        return render(new FastTierStatefulSetDependent(), d);
    }

    /** A dependent's desired object: {@code desired(DesiredCluster, Context)} is protected, its package's business. */
    @SuppressWarnings("unchecked")
    private static <R> R render(Object dependent, DesiredCluster desired) {
        try {
            for (Class<?> c = dependent.getClass(); c != null; c = c.getSuperclass()) {
                for (Method m : c.getDeclaredMethods()) {
                    if (m.getName().equals("desired")
                            && m.getParameterCount() == 2
                            && m.getParameterTypes()[0] == DesiredCluster.class) {
                        m.setAccessible(true);
                        return (R) m.invoke(dependent, desired, null);
                    }
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("no desired(DesiredCluster, Context) in " + dependent.getClass());
    }

    private static ThermoclineClusterSpec spec() {
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.archive.uriSecretRef = new SecretKeyRef("archive", null);
        spec.collections.add(new CollectionSpec("shop", "orders", "_id", "30d"));
        return spec;
    }

    private static DesiredCluster desired(ThermoclineClusterSpec spec) {
        return RenderedCluster.desired(LAYOUT, spec);
    }
}
