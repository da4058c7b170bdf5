package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;

/** TLS of the data plane (its {@code tls} section): clients to the proxy, and the CA of the tiers' certificates. */
@ValidationRule(value = "self.mode == 'disabled' || has(self.certificateSecretRef) || self.fastTierMode == 'requireTLS'",
        message = "tls.certificateSecretRef is required unless tls.mode is disabled or tls.fastTierMode is requireTLS"
                + " (the operator then issues the proxy's certificate itself)")
@ValidationRule(value = "!has(self.fastTierMode) || self.fastTierMode == 'disabled' || has(self.tierCaSecretRef)",
        message = "tls.tierCaSecretRef (the archive's CA) is required when tls.fastTierMode is requireTLS: the data plane"
                + " trusts one CA file for both tiers, the operator adds the fast tier's CA to it")
public class TlsSpec {

    public static final String DEFAULT_CA_KEY = "ca.crt";

    @Default("disabled")
    @Pattern("^(disabled|allowed|preferred|required)$")
    @JsonPropertyDescription("Client connections to the proxy, as mongod's net.tls.mode: disabled, allowed, preferred, required.")
    public String mode = "disabled";

    @JsonPropertyDescription("kubernetes.io/tls Secret (tls.crt, tls.key) with the certificate the proxy presents; mounted"
            + " into the proxy pods only. The proxy re-reads it when the Secret changes (cert-manager renewals). Unset with"
            + " fastTierMode requireTLS: the operator issues it (Secret NAME-proxy-tls, from its CA or tls.issuerRef).")
    public SecretRef certificateSecretRef;

    @JsonPropertyDescription("Optional Secret key with the PEM CAs of client certificates (key defaults to 'ca.crt'):"
            + " the proxy then asks for and verifies client certificates.")
    public SecretKeyRef clientCaSecretRef;

    @JsonPropertyDescription("Optional Secret key with the PEM CAs of the tiers' certificates (key defaults to 'ca.crt'),"
            + " mounted into the proxy and worker pods (tls.tierCaFile): the data plane then connects to both tiers over"
            + " TLS, host names checked. Both tiers must serve TLS. With fastTierMode requireTLS, the operator mounts these"
            + " CAs together with the fast tier's own.")
    public SecretKeyRef tierCaSecretRef;

    @Default("disabled")
    @Pattern("^(disabled|requireTLS)$")
    @JsonPropertyDescription("TLS of the fast tier (members to each other and every client): requireTLS, or disabled. The"
            + " operator rolls a running fast tier through allowTLS and preferTLS to it (or back), one member at a time.")
    public String fastTierMode = "disabled";

    @JsonPropertyDescription("Optional cert-manager issuer of the fast tier's certificate; without it the operator runs its"
            + " own CA (Secret NAME-fast-ca) and signs and renews the certificate itself.")
    public IssuerRef issuerRef;

    /** Client TLS at the proxy with a certificate the operator issues (the spec names none). */
    public boolean proxyCertificateGenerated() {
        return !"disabled".equals(mode) && certificateSecretRef == null && fastTierTls();
    }

    /** Whether the fast tier is to serve TLS. */
    public boolean fastTierTls() {
        return "requireTLS".equals(fastTierMode);
    }
}
