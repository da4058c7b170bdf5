package io.thermocline.operator.fasttier.tls;

/**
 * The fast tier's TLS for one reconcile: what the members' template runs, whether clients use TLS, and the
 * certificate material (with its hash, which rolls the pods when it changes); {@code clientBundleHash}: the data
 * plane's CA bundle, which rolls the data plane when it changes.
 */
public record FastTierTls(TlsRollout rollout, FastTierCertificates.Material material, String clientBundleHash) {

    public static final FastTierTls OFF = new FastTierTls(new TlsRollout(TlsMode.DISABLED, false), null, "");

    public TlsMode memberMode() {
        return rollout.template();
    }

    public boolean clientsTls() {
        return rollout.clientsTls();
    }

    /** Changes with the certificate or the CA bundle; empty while TLS is off. */
    public String hash() {
        return material == null || material.hash() == null ? "" : material.hash();
    }
}
