package io.thermocline.operator.fasttier.tls;

import io.fabric8.kubernetes.api.model.Secret;
import io.thermocline.operator.layout.ClusterLayout;
import io.thermocline.operator.layout.ContentHash;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * What the fast tier's serving certificate is worth, read from its Secret and nothing else: present, naming every member,
 * chaining to its CA bundle, not about to expire ({@link #inspect}); and the X.509 facts the renewal in
 * {@link FastTierCertificates} decides by. Pure: no client, no clock of its own.
 */
public final class CertificateInspection {

    private CertificateInspection() {}

    /** Whether the Secret's certificate is present, names every member, chains to its CA bundle and is not about to expire. */
    public static FastTierCertificates.Material inspect(
            Secret server, String issuedBy, ClusterLayout layout, int members, Instant now) {
        String secret = layout.fastTierTlsSecret();
        String source = issuedBy == null ? "the operator" : issuedBy;
        Map<String, String> data = FastTierCertificates.decoded(server);
        if (!data.containsKey(FastTierCertificates.TLS_CRT) || !data.containsKey(FastTierCertificates.TLS_KEY)) {
            return new FastTierCertificates.Material(
                    null,
                    null,
                    new FastTierCertificates.Problem(
                            "CertificateMissing",
                            "Secret " + secret + " has no tls.crt/tls.key yet ("
                                    + source + " issues it"
                                    + (issuedBy == null ? "" : "; see kubectl describe certificate " + secret)
                                    + "): the fast tier starts with TLS once it exists",
                            false),
                    null);
        }
        String bundle = data.get(FastTierCertificates.CA_CRT);
        X509Certificate certificate;
        List<X509Certificate> cas;
        try {
            certificate =
                    Pem.certificates(data.get(FastTierCertificates.TLS_CRT)).get(0);
            cas = Pem.certificates(bundle);
            Pem.privateKey(data.get(FastTierCertificates.TLS_KEY));
        } catch (RuntimeException e) {
            return invalid(secret, "tls.crt, tls.key or ca.crt is not PEM (" + e.getMessage() + ")");
        }
        if (cas.isEmpty()) {
            return invalid(
                    secret,
                    "ca.crt is empty: the issuer must publish its CA in the Secret (a cert-manager CA or Vault"
                            + " issuer does; an ACME issuer does not)");
        }
        if (cas.stream().noneMatch(ca -> signedBy(certificate, ca))) {
            return invalid(
                    secret,
                    "tls.crt (issuer " + certificate.getIssuerX500Principal().getName()
                            + ") is not signed by any CA in ca.crt");
        }
        List<String> missing = missingNames(certificate, layout, members);
        if (!missing.isEmpty()) {
            return invalid(
                    secret,
                    "tls.crt does not name " + missing + " (subjectAltName): "
                            + (issuedBy == null
                                    ? "the operator re-issues it"
                                    : "add them to the Certificate's dnsNames"));
        }
        Instant notAfter = certificate.getNotAfter().toInstant();
        String hash = ContentHash.of(data.get(FastTierCertificates.TLS_CRT) + "\n" + bundle);
        if (notAfter.isBefore(now)) {
            return new FastTierCertificates.Material(
                    bundle,
                    hash,
                    new FastTierCertificates.Problem(
                            "CertificateExpired",
                            "tls.crt of Secret " + secret + " expired at " + notAfter
                                    + ": members and clients refuse it; " + renewHint(issuedBy),
                            false),
                    notAfter);
        }
        if (Duration.between(now, notAfter).compareTo(FastTierCertificates.EXPIRY_WARNING) < 0) {
            return new FastTierCertificates.Material(
                    bundle,
                    hash,
                    new FastTierCertificates.Problem(
                            "CertificateExpiring",
                            "tls.crt of Secret " + secret + " expires at " + notAfter + " and was not renewed: "
                                    + renewHint(issuedBy),
                            true),
                    notAfter);
        }
        return new FastTierCertificates.Material(bundle, hash, null, notAfter);
    }

    private static String renewHint(String issuedBy) {
        return issuedBy == null
                ? "check the operator's log for event=fast-tier-certificate (or delete the Secret to re-issue it)"
                : "check why cert-manager does not renew it (kubectl describe certificate, the issuer's status)";
    }

    private static FastTierCertificates.Material invalid(String secret, String why) {
        return new FastTierCertificates.Material(
                null,
                null,
                new FastTierCertificates.Problem("CertificateInvalid", "Secret " + secret + ": " + why, false),
                null);
    }

    static List<String> missingNames(X509Certificate certificate, ClusterLayout layout, int members) {
        List<String> names = new ArrayList<>();
        try {
            Collection<List<?>> sans = certificate.getSubjectAlternativeNames();
            if (sans != null) {
                sans.stream()
                        .filter(san -> Integer.valueOf(2).equals(san.get(0)))
                        .forEach(san -> names.add((String) san.get(1)));
            }
        } catch (CertificateParsingException e) {
            return List.of("(unreadable subjectAltName)");
        }
        List<String> missing = new ArrayList<>();
        for (String host : layout.memberHosts(members)) {
            String name = host.substring(0, host.lastIndexOf(':'));
            String wildcard = "*" + name.substring(name.indexOf('.'));
            if (!names.contains(name) && !names.contains(wildcard)) {
                missing.add(name);
            }
        }
        if (!names.contains("localhost")) {
            missing.add("localhost");
        }
        return missing;
    }

    static boolean signedBy(X509Certificate certificate, X509Certificate ca) {
        try {
            certificate.verify(ca.getPublicKey());
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    static X509Certificate firstOrNull(String pem) {
        try {
            List<X509Certificate> certificates = Pem.certificates(pem);
            return certificates.isEmpty() ? null : certificates.get(0);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    static Duration left(X509Certificate certificate, Instant now) {
        return Duration.between(now, certificate.getNotAfter().toInstant());
    }
}
