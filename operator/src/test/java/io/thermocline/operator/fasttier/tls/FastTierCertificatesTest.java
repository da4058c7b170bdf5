package io.thermocline.operator.fasttier.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.thermocline.operator.api.v1alpha1.IssuerRef;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.layout.ClusterLayout;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The fast tier's CA and certificate in the operator's Secrets (fabric8's mock API server, CRUD mode), renewal and rotation. */
@EnableKubernetesMockClient(crud = true)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FastTierCertificatesTest {

    private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
    KubernetesClient client;
    private ThermoclineCluster cluster;
    private ClusterLayout layout;

    @BeforeEach
    void cluster() {
        cluster = new ThermoclineCluster();
        cluster.getMetadata().setName("orders");
        cluster.getMetadata().setNamespace("shop");
        cluster.getMetadata().setUid("uid-1");
        ThermoclineClusterSpec spec = new ThermoclineClusterSpec();
        spec.tls.fastTierMode = "requireTLS";
        spec.tls.tierCaSecretRef = new SecretKeyRef("archive-ca", null);
        cluster.setSpec(spec);
        layout = ClusterLayout.of(cluster);
    }

    @Test
    void theOperatorsCaSignsOneCertificateNamingEveryMemberAndLocalhost() throws Exception {
        FastTierCertificates.Material material = FastTierCertificates.ensure(client, cluster, 3, false, NOW);
        assertThat(material.problem()).isNull();
        assertThat(material.usable()).isTrue();

        Map<String, String> tls = FastTierCertificates.decoded(secret(layout.fastTierTlsSecret()));
        X509Certificate certificate = Pem.certificates(tls.get("tls.crt")).get(0);
        X509Certificate ca = Pem.certificates(FastTierCertificates.decoded(secret(layout.fastTierCaSecret()))
                        .get("ca.crt"))
                .get(0);
        certificate.verify(ca.getPublicKey());
        assertThat(ca.getBasicConstraints()).isGreaterThanOrEqualTo(0);
        assertThat(certificate.getBasicConstraints()).isEqualTo(-1);
        assertThat(certificate.getExtendedKeyUsage())
                .contains("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"); // server and client auth
        List<String> names = certificate.getSubjectAlternativeNames().stream()
                .map(san -> String.valueOf(san.get(1)))
                .toList();
        for (int i = 0; i < 7; i++) {
            assertThat(names)
                    .contains(
                            "orders-fast-" + i + ".orders-fast.shop.svc",
                            "orders-fast-" + i + ".orders-fast.shop.svc.cluster.local");
        }
        assertThat(names).contains("*.orders-fast.shop.svc", "localhost", "127.0.0.1");
        assertThat(Duration.between(NOW, certificate.getNotAfter().toInstant()))
                .isBetween(Duration.ofDays(89), Duration.ofDays(90));
        assertThat(tls.get("ca.crt")).isEqualTo(Pem.of(ca));
        assertThat(material.bundle()).isEqualTo(tls.get("ca.crt"));
        // owned by the resource: deleting it garbage-collects them (nothing of the data depends on them)
        assertThat(secret(layout.fastTierTlsSecret()).getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(ref -> assertThat(ref.getUid()).isEqualTo("uid-1"));
    }

    @Test
    void withoutACertificateSecretTheProxyGetsOneFromTheSameCaForItsServiceNames() throws Exception {
        cluster.getSpec().tls.mode = "required";
        FastTierCertificates.ensure(client, cluster, 3, true, NOW);
        Map<String, String> proxy = FastTierCertificates.decoded(secret("orders-proxy-tls"));
        X509Certificate certificate = Pem.certificates(proxy.get("tls.crt")).get(0);
        certificate.verify(ca().getPublicKey());
        assertThat(proxy.get("ca.crt")).isEqualTo(Pem.of(ca()));
        assertThat(certificate.getSubjectAlternativeNames().stream()
                        .map(san -> String.valueOf(san.get(1)))
                        .toList())
                .contains(
                        "orders-proxy",
                        "orders-proxy.shop",
                        "orders-proxy.shop.svc",
                        "orders-proxy.shop.svc.cluster.local");
        FastTierCertificates.ensure(client, cluster, 3, true, NOW.plus(Duration.ofDays(59)));
        assertThat(FastTierCertificates.decoded(secret("orders-proxy-tls")).get("tls.crt"))
                .isEqualTo(proxy.get("tls.crt"));
        FastTierCertificates.ensure(client, cluster, 3, true, NOW.plus(Duration.ofDays(61)));
        assertThat(FastTierCertificates.decoded(secret("orders-proxy-tls")).get("tls.crt"))
                .as("renewed")
                .isNotEqualTo(proxy.get("tls.crt"));

        cluster.getSpec().tls.certificateSecretRef = new io.thermocline.operator.api.v1alpha1.SecretRef("mine");
        assertThat(cluster.getSpec().tls.proxyCertificateGenerated())
                .as("a named Secret is the user's")
                .isFalse();
    }

    @Test
    void theCertificateIsRenewedOnceLessThanThirtyDaysAreLeftAndNotBefore() {
        FastTierCertificates.ensure(client, cluster, 3, true, NOW);
        String first = tlsCrt();
        String hash = FastTierCertificates.ensure(client, cluster, 3, true, NOW.plus(Duration.ofDays(59)))
                .hash();
        assertThat(tlsCrt()).as("31 days left: kept").isEqualTo(first);
        FastTierCertificates.Material renewed =
                FastTierCertificates.ensure(client, cluster, 3, true, NOW.plus(Duration.ofDays(61)));
        assertThat(tlsCrt()).as("29 days left: renewed").isNotEqualTo(first);
        assertThat(renewed.hash())
                .as("the hash rolls the pods onto the new certificate")
                .isNotEqualTo(hash);
        assertThat(renewed.problem()).isNull();
    }

    @Test
    void aNewCaIsTrustedEverywhereBeforeItSignsAndTheOldOneLeavesOnlyAfterwards() {
        FastTierCertificates.ensure(client, cluster, 3, true, NOW);
        X509Certificate oldCa = ca();
        Instant late = oldCa.getNotAfter().toInstant().minus(Duration.ofDays(300)); // less than a year left
        // (1) the new CA joins the bundle; the certificate stays the old CA's while the pods do not all have the bundle
        FastTierCertificates.Material step1 = FastTierCertificates.ensure(client, cluster, 3, true, late);
        X509Certificate newCa = ca();
        assertThat(newCa.getSerialNumber()).isNotEqualTo(oldCa.getSerialNumber());
        assertThat(Pem.certificates(step1.bundle()))
                .extracting(X509Certificate::getSerialNumber)
                .containsExactlyInAnyOrder(oldCa.getSerialNumber(), newCa.getSerialNumber());
        assertThat(signedBy(oldCa)).isTrue();
        FastTierCertificates.ensure(client, cluster, 3, false, late.plusSeconds(60)); // still rolling
        assertThat(signedBy(oldCa)).isTrue();
        // (2) every pod trusts both: the certificate is re-issued by the new CA, the old one still trusted
        FastTierCertificates.Material step2 =
                FastTierCertificates.ensure(client, cluster, 3, true, late.plusSeconds(120));
        assertThat(signedBy(newCa)).isTrue();
        assertThat(Pem.certificates(step2.bundle())).hasSize(2);
        // (3) every pod runs the new certificate: the old CA leaves the bundle
        FastTierCertificates.Material step3 =
                FastTierCertificates.ensure(client, cluster, 3, true, late.plusSeconds(180));
        assertThat(Pem.certificates(step3.bundle()))
                .extracting(X509Certificate::getSerialNumber)
                .containsExactly(newCa.getSerialNumber());
        assertThat(FastTierCertificates.decoded(secret(layout.fastTierCaSecret())))
                .doesNotContainKey("previous-ca.crt");
        assertThat(step3.problem()).isNull();
    }

    @Test
    void conditionsNameWhatIsMissingInvalidOrExpiringWithoutKeyMaterial() {
        FastTierCertificates.Material missing = CertificateInspection.inspect(null, null, layout, 3, NOW);
        assertThat(missing.problem().reason()).isEqualTo("CertificateMissing");
        assertThat(missing.problem().message()).contains("orders-fast-tls");
        assertThat(missing.usable()).isFalse();

        Secret garbage = new SecretBuilder()
                .withNewMetadata()
                .withName("orders-fast-tls")
                .endMetadata()
                .withData(encode(
                        Map.of("tls.crt", "-----BEGIN CERTIFICATE-----\nnot-a-cert\n", "tls.key", "x", "ca.crt", "y")))
                .build();
        assertThat(CertificateInspection.inspect(garbage, null, layout, 3, NOW)
                        .problem()
                        .reason())
                .isEqualTo("CertificateInvalid");

        // this one names member 0 only
        CertificateAuthority.Issued ca = CertificateAuthority.newCa("x", NOW, Duration.ofDays(365));
        CertificateAuthority.Issued narrow = CertificateAuthority.issue(
                ca, "x", List.of("orders-fast-0.orders-fast.shop.svc", "localhost"), NOW, Duration.ofDays(90));
        FastTierCertificates.Material invalid = CertificateInspection.inspect(
                server(narrow, ca), "cert-manager Certificate orders-fast-tls", layout, 3, NOW);
        assertThat(invalid.problem().reason()).isEqualTo("CertificateInvalid");
        assertThat(invalid.problem().message())
                .contains("[orders-fast-1.orders-fast.shop.svc, orders-fast-2.orders-fast.shop.svc]", "dnsNames");

        CertificateAuthority.Issued other = CertificateAuthority.newCa("other", NOW, Duration.ofDays(365));
        CertificateAuthority.Issued full =
                CertificateAuthority.issue(ca, "x", FastTierCertificates.dnsNames(layout), NOW, Duration.ofDays(90));
        assertThat(CertificateInspection.inspect(server(full, other), null, layout, 3, NOW)
                        .problem()
                        .message())
                .contains("not signed by any CA in ca.crt");

        FastTierCertificates.Material expiring =
                CertificateInspection.inspect(server(full, ca), null, layout, 3, NOW.plus(Duration.ofDays(85)));
        assertThat(expiring.problem().reason()).isEqualTo("CertificateExpiring");
        assertThat(expiring.usable()).as("still works meanwhile").isTrue();
        assertThat(expiring.problem().message()).contains("expires at");
        assertThat(CertificateInspection.inspect(server(full, ca), null, layout, 3, NOW.plus(Duration.ofDays(91)))
                        .problem()
                        .reason())
                .isEqualTo("CertificateExpired");
        for (FastTierCertificates.Material m : List.of(missing, invalid, expiring)) {
            assertThat(m.problem().message())
                    .doesNotContain("PRIVATE KEY")
                    .doesNotContain(full.keyPem().substring(30, 60));
        }
    }

    @Test
    void withAnIssuerRefCertManagerIssuesItAndTheOperatorSignsNothing() {
        cluster.getSpec().tls.issuerRef = new IssuerRef("shop-ca", "ClusterIssuer");
        FastTierCertificates.Material before = FastTierCertificates.ensure(client, cluster, 3, true, NOW);
        assertThat(before.problem().reason()).isEqualTo("CertificateMissing");
        assertThat(before.problem().message()).contains("kubectl describe certificate orders-fast-tls");
        assertThat(secret(layout.fastTierCaSecret()))
                .as("no CA of the operator's")
                .isNull();

        GenericKubernetesResource certificate = client.genericKubernetesResources(FastTierCertificates.CERTIFICATES)
                .inNamespace("shop")
                .withName("orders-fast-tls")
                .get();
        @SuppressWarnings("unchecked")
        Map<String, Object> spec =
                (Map<String, Object>) certificate.getAdditionalProperties().get("spec");
        assertThat(spec)
                .containsEntry("secretName", "orders-fast-tls")
                .containsEntry("renewBefore", "720h")
                .containsEntry("duration", "2160h");
        assertThat(spec.get("issuerRef"))
                .isEqualTo(Map.of("name", "shop-ca", "kind", "ClusterIssuer", "group", "cert-manager.io"));
        assertThat(spec.get("dnsNames").toString()).contains("orders-fast-6.orders-fast.shop.svc", "localhost");
        assertThat(spec.get("usages").toString()).contains("server auth", "client auth");
        assertThat(spec.get("secretTemplate").toString()).contains("app.kubernetes.io/managed-by=thermocline-operator");

        // as cert-manager writes it
        CertificateAuthority.Issued ca = CertificateAuthority.newCa("shop-ca", NOW, Duration.ofDays(3650));
        client.secrets()
                .inNamespace("shop")
                .resource(server(
                        CertificateAuthority.issue(
                                ca, "orders-fast", FastTierCertificates.dnsNames(layout), NOW, Duration.ofDays(90)),
                        ca))
                .create();
        FastTierCertificates.Material issued = FastTierCertificates.ensure(client, cluster, 3, true, NOW);
        assertThat(issued.problem()).isNull();
        assertThat(issued.bundle()).isEqualTo(ca.certificatePem());
        // applying again writes nothing while the spec is the same
        String version = client.genericKubernetesResources(FastTierCertificates.CERTIFICATES)
                .inNamespace("shop")
                .withName("orders-fast-tls")
                .get()
                .getMetadata()
                .getResourceVersion();
        FastTierCertificates.ensure(client, cluster, 3, true, NOW);
        assertThat(client.genericKubernetesResources(FastTierCertificates.CERTIFICATES)
                        .inNamespace("shop")
                        .withName("orders-fast-tls")
                        .get()
                        .getMetadata()
                        .getResourceVersion())
                .isEqualTo(version);
    }

    private static Secret server(CertificateAuthority.Issued certificate, CertificateAuthority.Issued ca) {
        return new SecretBuilder()
                .withNewMetadata()
                .withName("orders-fast-tls")
                .withNamespace("shop")
                .endMetadata()
                .withType("kubernetes.io/tls")
                .withData(encode(Map.of(
                        "tls.crt",
                        certificate.certificatePem(),
                        "tls.key",
                        certificate.keyPem(),
                        "ca.crt",
                        ca.certificatePem())))
                .build();
    }

    private static Map<String, String> encode(Map<String, String> plain) {
        return plain.entrySet().stream()
                .collect(Collectors.toMap(
                        Map.Entry::getKey,
                        e -> Base64.getEncoder().encodeToString(e.getValue().getBytes(StandardCharsets.UTF_8))));
    }

    private boolean signedBy(X509Certificate ca) {
        try {
            Pem.certificates(tlsCrt()).get(0).verify(ca.getPublicKey());
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    private X509Certificate ca() {
        return Pem.certificates(FastTierCertificates.decoded(secret(layout.fastTierCaSecret()))
                        .get("ca.crt"))
                .get(0);
    }

    private String tlsCrt() {
        return FastTierCertificates.decoded(secret(layout.fastTierTlsSecret())).get("tls.crt");
    }

    private Secret secret(String name) {
        return client.secrets().inNamespace("shop").withName(name).get();
    }
}
