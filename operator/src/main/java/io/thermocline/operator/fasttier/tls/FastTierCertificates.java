package io.thermocline.operator.fasttier.tls;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.thermocline.operator.api.v1alpha1.IssuerRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import io.thermocline.operator.layout.ClusterLayout;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * The fast tier's server certificate and the CAs that verify it, in Secrets the operator owns (or a
 * cert-manager {@code Certificate} when {@code spec.tls.issuerRef} names an issuer).
 *
 * <p>Renewal, by the operator's own CA: the server certificate lasts {@link #CERTIFICATE_VALIDITY} and is
 * re-issued once less than {@link #CERTIFICATE_RENEW_BEFORE} is left (a third of its life, cert-manager's
 * default rule), or when its names no longer cover every member; the CA lasts {@link #CA_VALIDITY} and is
 * replaced once less than {@link #CA_RENEW_BEFORE} is left. A new CA never breaks a connection: (1) the
 * bundle every member and client trusts ({@code ca.crt}) holds the new CA beside the old one, and the
 * certificate stays the old CA's; (2) once every pod runs with that bundle, the certificate is re-issued
 * by the new CA; (3) once every pod runs with that certificate, the old CA leaves the bundle. Each change
 * rolls the members one at a time (its hash is in the pod template) and the data plane's Deployments.
 */
public final class FastTierCertificates {

    public static final Duration CA_VALIDITY = Duration.ofDays(5 * 365);
    public static final Duration CA_RENEW_BEFORE = Duration.ofDays(365);
    public static final Duration CERTIFICATE_VALIDITY = Duration.ofDays(90);
    public static final Duration CERTIFICATE_RENEW_BEFORE = Duration.ofDays(30);
    /** Less left than this means renewal has failed for weeks: the condition turns False. */
    public static final Duration EXPIRY_WARNING = Duration.ofDays(7);

    public static final String CA_CRT = "ca.crt";
    public static final String CA_KEY = "ca.key";
    public static final String PREVIOUS_CA_CRT = "previous-ca.crt";
    public static final String PREVIOUS_CA_KEY = "previous-ca.key";
    public static final String TLS_CRT = "tls.crt";
    public static final String TLS_KEY = "tls.key";

    /** cert-manager's Certificate, addressed without its CRD being known to the client (or installed, in tests). */
    public static final ResourceDefinitionContext CERTIFICATES = new ResourceDefinitionContext.Builder()
            .withGroup("cert-manager.io")
            .withVersion("v1")
            .withKind("Certificate")
            .withPlural("certificates")
            .withNamespaced(true)
            .build();

    private static final Logger LOG = Logger.getLogger(FastTierCertificates.class);

    /**
     * What the fast tier's TLS stands on now.
     *
     * @param bundle  the PEM CAs members and clients trust (null: no usable certificate yet)
     * @param hash    changes whenever the certificate or the bundle does (pod-template annotation)
     * @param problem null when the certificate is valid; else why not, for the condition
     */
    public record Material(String bundle, String hash, Problem problem, Instant notAfter) {
        public boolean usable() {
            return bundle != null && (problem == null || problem.usable());
        }
    }

    /** A reason (CamelCase) and a message a person can act on; {@code usable}: TLS still works meanwhile (expiring soon). */
    public record Problem(String reason, String message, boolean usable) {}

    private FastTierCertificates() {}

    /** Every name the certificate carries: each possible member (up to 7), the Service's wildcard, localhost. */
    public static List<String> dnsNames(ClusterLayout layout) {
        List<String> names = new ArrayList<>();
        for (String host : layout.memberHosts(7)) {
            String name = host.substring(0, host.lastIndexOf(':'));
            names.add(name);
            names.add(name + ".cluster.local");
        }
        String domain = layout.fastTier() + "." + layout.namespace() + ".svc";
        names.add("*." + domain);
        names.add("*." + domain + ".cluster.local");
        names.add("localhost");
        return names;
    }

    /**
     * Makes or renews what is due, then reports on it.
     *
     * @param rolledOut every fast-tier and data-plane pod runs the current template (with the current hash)
     */
    public static Material ensure(
            KubernetesClient client, ThermoclineCluster cluster, int members, boolean rolledOut, Instant now) {
        ClusterLayout layout = ClusterLayout.of(cluster);
        IssuerRef issuer = cluster.getSpec().tls == null ? null : cluster.getSpec().tls.issuerRef;
        boolean proxy = cluster.getSpec().tls != null && cluster.getSpec().tls.proxyCertificateGenerated();
        if (issuer != null) {
            applyCertificate(
                    client, cluster, layout, issuer, layout.fastTierTlsSecret(), layout.fastTier(), dnsNames(layout));
            if (proxy) {
                applyCertificate(
                        client,
                        cluster,
                        layout,
                        issuer,
                        layout.proxyTlsSecret(),
                        layout.proxy(),
                        proxyDnsNames(layout));
            }
        } else {
            renew(client, cluster, layout, members, rolledOut, now);
            if (proxy) {
                renewProxy(client, cluster, layout, now);
            }
        }
        Secret server = client.secrets()
                .inNamespace(layout.namespace())
                .withName(layout.fastTierTlsSecret())
                .get();
        return CertificateInspection.inspect(
                server,
                issuer == null ? null : "cert-manager Certificate " + layout.fastTierTlsSecret(),
                layout,
                members,
                now);
    }

    /** The names applications reach the proxy by: its Service, short and long. */
    public static List<String> proxyDnsNames(ClusterLayout layout) {
        String service = layout.proxy();
        return List.of(
                service,
                service + "." + layout.namespace(),
                service + "." + layout.namespace() + ".svc",
                service + "." + layout.namespace() + ".svc.cluster.local");
    }

    /**
     * The proxy's client-facing certificate from the operator's CA, when the spec names none: re-issued when
     * less than 30 days are left or another CA signs it; {@code ca.crt} carries the CAs clients are to trust (both
     * during a CA rotation). The proxy re-reads the files when the kubelet updates them: no restart.
     */
    static void renewProxy(KubernetesClient client, ThermoclineCluster cluster, ClusterLayout layout, Instant now) {
        Map<String, String> ca = decoded(client.secrets()
                .inNamespace(layout.namespace())
                .withName(layout.fastTierCaSecret())
                .get());
        CertificateAuthority.Issued current = issued(ca, CA_CRT, CA_KEY);
        if (current == null) {
            return;
        }
        CertificateAuthority.Issued previous = issued(ca, PREVIOUS_CA_CRT, PREVIOUS_CA_KEY);
        Map<String, String> before = decoded(client.secrets()
                .inNamespace(layout.namespace())
                .withName(layout.proxyTlsSecret())
                .get());
        Map<String, String> after = new LinkedHashMap<>(before);
        X509Certificate serving =
                before.containsKey(TLS_CRT) ? CertificateInspection.firstOrNull(before.get(TLS_CRT)) : null;
        if (serving == null
                || !CertificateInspection.signedBy(serving, current.certificate())
                || CertificateInspection.left(serving, now).compareTo(CERTIFICATE_RENEW_BEFORE) < 0) {
            CertificateAuthority.Issued issued = CertificateAuthority.issue(
                    current, layout.proxy(), proxyDnsNames(layout), now, CERTIFICATE_VALIDITY);
            after.put(TLS_CRT, issued.certificatePem());
            after.put(TLS_KEY, issued.keyPem());
            LOG.infof(
                    "event=proxy-certificate cluster=%s/%s step=issued notAfter=%s",
                    layout.namespace(),
                    layout.cluster(),
                    issued.certificate().getNotAfter().toInstant());
        }
        after.put(CA_CRT, current.certificatePem() + (previous == null ? "" : previous.certificatePem()));
        write(client, cluster, layout, layout.proxyTlsSecret(), before, after);
    }

    /** The operator's own CA and certificate: create what is missing, renew what is due (see the class comment). */
    static void renew(
            KubernetesClient client,
            ThermoclineCluster cluster,
            ClusterLayout layout,
            int members,
            boolean rolledOut,
            Instant now) {
        Map<String, String> ca = decoded(client.secrets()
                .inNamespace(layout.namespace())
                .withName(layout.fastTierCaSecret())
                .get());
        Map<String, String> server = decoded(client.secrets()
                .inNamespace(layout.namespace())
                .withName(layout.fastTierTlsSecret())
                .get());
        Map<String, String> nextCa = new LinkedHashMap<>(ca);
        CertificateAuthority.Issued current = issued(ca, CA_CRT, CA_KEY);
        if (current == null) {
            current = CertificateAuthority.newCa(layout.fastTier() + "-ca", now, CA_VALIDITY);
            nextCa.clear();
            nextCa.put(CA_CRT, current.certificatePem());
            nextCa.put(CA_KEY, current.keyPem());
            LOG.infof(
                    "event=fast-tier-certificate cluster=%s/%s step=ca-created", layout.namespace(), layout.cluster());
        } else if (CertificateInspection.left(current.certificate(), now).compareTo(CA_RENEW_BEFORE) < 0
                && !ca.containsKey(PREVIOUS_CA_CRT)) {
            CertificateAuthority.Issued fresh = CertificateAuthority.newCa(layout.fastTier() + "-ca", now, CA_VALIDITY);
            nextCa.put(PREVIOUS_CA_CRT, current.certificatePem());
            nextCa.put(PREVIOUS_CA_KEY, current.keyPem());
            nextCa.put(CA_CRT, fresh.certificatePem());
            nextCa.put(CA_KEY, fresh.keyPem());
            current = fresh;
            rolledOut = false; // the new bundle is not in any pod yet
            LOG.infof(
                    "event=fast-tier-certificate cluster=%s/%s step=ca-rotated", layout.namespace(), layout.cluster());
        }
        CertificateAuthority.Issued previous = issued(nextCa, PREVIOUS_CA_CRT, PREVIOUS_CA_KEY);
        X509Certificate serving =
                server.containsKey(TLS_CRT) ? CertificateInspection.firstOrNull(server.get(TLS_CRT)) : null;
        boolean byPrevious =
                serving != null && previous != null && CertificateInspection.signedBy(serving, previous.certificate());
        boolean byCurrent = serving != null && CertificateInspection.signedBy(serving, current.certificate());
        boolean due = serving == null
                || (!byCurrent && !byPrevious)
                || CertificateInspection.left(serving, now).compareTo(CERTIFICATE_RENEW_BEFORE) < 0
                || !CertificateInspection.missingNames(serving, layout, members).isEmpty();
        Map<String, String> nextServer = new LinkedHashMap<>(server);
        if (byPrevious && rolledOut) {
            due = true; // step 2: every pod trusts the new CA now
        }
        if (due) {
            // while the pods do not all trust the new CA yet, a renewal due meanwhile is signed by the old one
            CertificateAuthority.Issued signer = byPrevious && !rolledOut ? previous : current;
            CertificateAuthority.Issued issued =
                    CertificateAuthority.issue(signer, layout.fastTier(), dnsNames(layout), now, CERTIFICATE_VALIDITY);
            nextServer.put(TLS_CRT, issued.certificatePem());
            nextServer.put(TLS_KEY, issued.keyPem());
            byCurrent = signer == current;
            LOG.infof(
                    "event=fast-tier-certificate cluster=%s/%s step=issued notAfter=%s",
                    layout.namespace(),
                    layout.cluster(),
                    issued.certificate().getNotAfter().toInstant());
        } else if (byCurrent && previous != null && rolledOut) {
            nextCa.remove(PREVIOUS_CA_CRT); // step 3: nothing presents a certificate of the old CA any more
            nextCa.remove(PREVIOUS_CA_KEY);
            previous = null;
            LOG.infof(
                    "event=fast-tier-certificate cluster=%s/%s step=old-ca-dropped",
                    layout.namespace(), layout.cluster());
        }
        nextServer.put(CA_CRT, current.certificatePem() + (previous == null ? "" : previous.certificatePem()));
        write(client, cluster, layout, layout.fastTierCaSecret(), ca, nextCa);
        write(client, cluster, layout, layout.fastTierTlsSecret(), server, nextServer);
    }

    /** The cert-manager Certificate whose Secret the fast tier mounts (cert-manager renews it; its labels let the operator see it). */
    static void applyCertificate(
            KubernetesClient client,
            ThermoclineCluster cluster,
            ClusterLayout layout,
            IssuerRef issuer,
            String name,
            String commonName,
            List<String> dnsNames) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("secretName", name);
        spec.put("commonName", commonName);
        spec.put("dnsNames", dnsNames);
        spec.put("ipAddresses", List.of("127.0.0.1"));
        spec.put("duration", CERTIFICATE_VALIDITY.toHours() + "h");
        spec.put("renewBefore", CERTIFICATE_RENEW_BEFORE.toHours() + "h");
        spec.put("usages", List.of("digital signature", "key encipherment", "server auth", "client auth"));
        spec.put("privateKey", Map.of("algorithm", "ECDSA", "size", 256, "rotationPolicy", "Always"));
        spec.put(
                "issuerRef",
                Map.of(
                        "name",
                        issuer.name,
                        "kind",
                        issuer.kind == null ? "Issuer" : issuer.kind,
                        "group",
                        issuer.group == null ? "cert-manager.io" : issuer.group));
        spec.put("secretTemplate", Map.of("labels", layout.labels("fast-tier")));
        GenericKubernetesResource certificate = new GenericKubernetesResourceBuilder()
                .withApiVersion("cert-manager.io/v1")
                .withKind("Certificate")
                .withMetadata(metadata(cluster, layout, name))
                .addToAdditionalProperties("spec", spec)
                .build();
        var certificates = client.genericKubernetesResources(CERTIFICATES).inNamespace(layout.namespace());
        var resource = certificates.withName(name);
        GenericKubernetesResource existing = resource.get();
        if (existing == null) {
            certificates.resource(certificate).create();
        } else if (!spec.equals(existing.getAdditionalProperties().get("spec"))) {
            resource.edit(c -> {
                c.getAdditionalProperties().put("spec", spec);
                return c;
            });
        }
    }

    /** Creates or replaces the data of an operator-owned Secret; nothing when it holds {@code after} already. */
    public static void write(
            KubernetesClient client,
            ThermoclineCluster cluster,
            ClusterLayout layout,
            String name,
            Map<String, String> before,
            Map<String, String> after) {
        if (after.equals(before)) {
            return;
        }
        Map<String, String> data = new LinkedHashMap<>();
        after.forEach((k, v) -> data.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
        var secrets = client.secrets().inNamespace(layout.namespace());
        if (before.isEmpty() && secrets.withName(name).get() == null) {
            secrets.resource(new SecretBuilder()
                            .withMetadata(metadata(cluster, layout, name))
                            .withType("Opaque")
                            .withData(data)
                            .build())
                    .create();
        } else {
            secrets.withName(name).edit(s -> {
                s.setData(data);
                return s;
            });
        }
    }

    private static ObjectMeta metadata(ThermoclineCluster cluster, ClusterLayout layout, String name) {
        return new ObjectMetaBuilder()
                .withName(name)
                .withNamespace(layout.namespace())
                .withLabels(layout.labels("fast-tier"))
                .withOwnerReferences(new OwnerReferenceBuilder()
                        .withApiVersion(cluster.getApiVersion())
                        .withKind(cluster.getKind())
                        .withName(cluster.getMetadata().getName())
                        .withUid(cluster.getMetadata().getUid())
                        .build())
                .build();
    }

    private static CertificateAuthority.Issued issued(Map<String, String> data, String crt, String key) {
        if (!data.containsKey(crt) || !data.containsKey(key)) {
            return null;
        }
        X509Certificate certificate = CertificateInspection.firstOrNull(data.get(crt));
        return certificate == null ? null : new CertificateAuthority.Issued(data.get(crt), data.get(key), certificate);
    }

    public static Map<String, String> decoded(Secret secret) {
        Map<String, String> out = new LinkedHashMap<>();
        if (secret != null && secret.getData() != null) {
            secret.getData()
                    .forEach((k, v) -> out.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
        }
        return out;
    }
}
