package io.thermocline.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.archive.ArchiveSecrets;
import io.thermocline.operator.kit.Clusters;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What makes a spec invalid before anything is made from it: plain JUnit, no API server. */
@Timeout(60)
class RenderedConfigTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout("orders", "shop");
    private static final ArchiveSecrets.Lookup NO_SECRETS = name -> null;

    private static ThermoclineClusterSpec spec() {
        return Clusters.cluster("shop", "orders").getSpec();
    }

    private static Secret secret(String name, Map<String, String> data, Map<String, String> stringData) {
        return new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withData(data)
                .withStringData(stringData)
                .build();
    }

    @Test
    void aValidSpecRendersItsConfigWithoutAProblem() {
        RenderedConfig config = RenderedConfig.of(LAYOUT, spec(), NO_SECRETS);
        assertThat(config.problem()).isNull();
        assertThat(config.yaml()).contains("shop").contains("orders");
    }

    @Test
    void aNameThatCannotPrefixAServiceIsAProblem() {
        RenderedConfig config = RenderedConfig.of(new ClusterLayout("shop.orders", "shop"), spec(), NO_SECRETS);
        assertThat(config.problem())
                .startsWith("metadata.name shop.orders cannot prefix the cluster's Service names")
                .endsWith("re-create the resource under such a name");

        String longest = "a".repeat(44);
        assertThat(RenderedConfig.of(new ClusterLayout(longest, "shop"), spec(), NO_SECRETS)
                        .problem())
                .as("44 characters still prefix every Service name")
                .isNull();
        String tooLong = "a".repeat(45);
        assertThat(RenderedConfig.of(new ClusterLayout(tooLong, "shop"), spec(), NO_SECRETS)
                        .problem())
                .contains("metadata.name " + tooLong)
                .contains("at most 44 characters");
    }

    @Test
    void aValueTheRendererCannotReadIsTheProblemAndNothingIsRendered() {
        ThermoclineClusterSpec spec = spec();
        spec.collections.get(0).hotWindow = "soon";
        RenderedConfig config = RenderedConfig.of(LAYOUT, spec, NO_SECRETS);
        assertThat(config.yaml()).isNull();
        assertThat(config.problem()).contains("'soon' is not a duration");
    }

    @Test
    void whatTheDataPlaneRejectsIsAProblemNamingTheField() {
        ThermoclineClusterSpec spec = spec();
        spec.collections.add(new CollectionSpec("shop", "orders", "createdAt", "7d"));
        assertThat(RenderedConfig.of(LAYOUT, spec, NO_SECRETS).problem())
                .startsWith("the data plane rejects the rendered config: ")
                .contains("collections[1]");
    }

    @Test
    void optionsTheCrdRefusesAreProblemsJoinedInOneMessage() {
        ThermoclineClusterSpec spec = spec();
        spec.fastTier.mongodArgs = List.of("--port", "27018");
        spec.proxy.expose.loadBalancerSourceRanges = List.of("10.0.0.0/8");
        assertThat(RenderedConfig.of(LAYOUT, spec, NO_SECRETS).problem())
                .contains("proxy.expose.loadBalancerSourceRanges needs proxy.expose.type LoadBalancer")
                .contains("; ")
                .contains("fastTier.mongodArgs holds --port");
    }

    @Test
    void aNamedSecretMustExistWithItsKey() {
        ThermoclineClusterSpec spec = spec();
        spec.tls.tierCaSecretRef = new SecretKeyRef("tier-ca", null);

        assertThat(RenderedConfig.of(LAYOUT, spec, NO_SECRETS).problem())
                .isEqualTo("Secret shop/tier-ca (named in spec.auth or spec.tls) does not exist; create it");
        assertThat(RenderedConfig.of(LAYOUT, spec, name -> secret(name, Map.of("other", "eA=="), null))
                        .problem())
                .isEqualTo("Secret shop/tier-ca has no key ca.crt; add it");
        assertThat(RenderedConfig.of(LAYOUT, spec, name -> secret(name, null, Map.of("other", "x")))
                        .problem())
                .isEqualTo("Secret shop/tier-ca has no key ca.crt; add it");
        assertThat(RenderedConfig.of(LAYOUT, spec, name -> secret(name, Map.of("ca.crt", "eA=="), null))
                        .problem())
                .isNull();
        assertThat(RenderedConfig.of(LAYOUT, spec, name -> secret(name, null, Map.of("ca.crt", "x")))
                        .problem())
                .isNull();
        assertThat(RenderedConfig.of(
                                LAYOUT,
                                spec,
                                name -> "other".equals(name) ? secret(name, Map.of("ca.crt", "eA=="), null) : null)
                        .problem())
                .as("the Secret is looked up by the name spec.tls gives")
                .contains("does not exist");
    }
}
