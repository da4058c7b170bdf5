package io.thermocline.operator.dataplane;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.thermocline.operator.api.v1alpha1.AuthSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import io.thermocline.operator.api.v1alpha1.ThermoclineClusterSpec;
import io.thermocline.operator.api.v1alpha1.TlsSpec;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The Secrets each data-plane role gets as files, by least privilege: the tiers' and the archive's CAs
 * go to every role (they all connect to the tiers); the fleet's peer-link key, the users file and the
 * proxy's certificate, key and client CA only to the proxy, the one role that serves clients. The rendered config is shared, so the
 * workers switch its client-facing {@code auth} and {@code tls} parts off through environment overrides
 * (else their config loader would look for files they are not given).
 */
public final class DataPlaneMounts {

    public static final String PROXY = "proxy";
    public static final String USERS_DIR = ClusterLayout.CONFIG_DIR + "/auth";
    public static final String CERTIFICATE_DIR = ClusterLayout.CONFIG_DIR + "/tls";
    public static final String CLIENT_CA_DIR = ClusterLayout.CONFIG_DIR + "/client-ca";
    public static final String TIER_CA_DIR = ClusterLayout.CONFIG_DIR + "/tier-ca";
    public static final String ARCHIVE_CA_DIR = ClusterLayout.CONFIG_DIR + "/archive-ca";
    public static final String PEER_DIR = ClusterLayout.CONFIG_DIR + "/peer";
    /** The proxy's {@code fleet.secretFile}: the operator's generated peer-link key. */
    public static final String PEER_SECRET_FILE = PEER_DIR + "/secret";

    /** A Secret mounted read-only at {@code dir} as volume {@code volume}. */
    public record Mount(String volume, String secret, String dir) {
    }

    private DataPlaneMounts() {
    }

    public static List<Mount> of(ThermoclineClusterSpec spec, ClusterLayout layout, String role) {
        List<Mount> mounts = new ArrayList<>();
        if (spec.archive.tls != null && spec.archive.tls.caSecretRef != null) {
            mounts.add(new Mount("archive-ca", spec.archive.tls.caSecretRef.name, ARCHIVE_CA_DIR));
        }
        TlsSpec tls = spec.tls == null ? new TlsSpec() : spec.tls;
        if (tls.tierCaSecretRef != null) {
            mounts.add(new Mount("tier-ca", tls.tierCaSecretRef.name, TIER_CA_DIR));
        }
        if (!PROXY.equals(role)) {
            return mounts;
        }
        mounts.add(new Mount("peer", layout.peerSecret(), PEER_DIR));
        AuthSpec auth = spec.auth == null ? new AuthSpec() : spec.auth;
        if (auth.usesFile() && auth.usersSecretRef != null) {
            mounts.add(new Mount("users", auth.usersSecretRef.name, USERS_DIR));
        }
        if (tls.certificateSecretRef != null && !"disabled".equals(tls.mode)) {
            mounts.add(new Mount("certificate", tls.certificateSecretRef.name, CERTIFICATE_DIR));
        }
        if (tls.clientCaSecretRef != null) {
            mounts.add(new Mount("client-ca", tls.clientCaSecretRef.name, CLIENT_CA_DIR));
        }
        return mounts;
    }

    /** Every Secret a cluster's spec names besides the archive's, with the key read from it (null: the whole Secret). */
    public static List<SecretKeyRef> referencedSecrets(ThermoclineClusterSpec spec) {
        List<SecretKeyRef> refs = new ArrayList<>();
        AuthSpec auth = spec.auth == null ? new AuthSpec() : spec.auth;
        if (auth.usesFile() && auth.usersSecretRef != null) {
            refs.add(new SecretKeyRef(auth.usersSecretRef.name, auth.usersSecretRef.keyOr(AuthSpec.DEFAULT_USERS_KEY)));
        }
        TlsSpec tls = spec.tls == null ? new TlsSpec() : spec.tls;
        if (tls.certificateSecretRef != null && !"disabled".equals(tls.mode)) {
            refs.add(new SecretKeyRef(tls.certificateSecretRef.name, "tls.crt"));
            refs.add(new SecretKeyRef(tls.certificateSecretRef.name, "tls.key"));
        }
        if (tls.clientCaSecretRef != null) {
            refs.add(new SecretKeyRef(tls.clientCaSecretRef.name, tls.clientCaSecretRef.keyOr(TlsSpec.DEFAULT_CA_KEY)));
        }
        if (tls.tierCaSecretRef != null) {
            refs.add(new SecretKeyRef(tls.tierCaSecretRef.name, tls.tierCaSecretRef.keyOr(TlsSpec.DEFAULT_CA_KEY)));
        }
        return refs;
    }

    /** A worker serves no clients: client authentication and TLS off, the users file and client CA unset. */
    public static List<EnvVar> overrides(String role) {
        if (PROXY.equals(role)) {
            return List.of();
        }
        return List.of(env("THERMOCLINE_AUTH_MODE", "disabled"), env("THERMOCLINE_AUTH_USERS", "[]"),
                env("THERMOCLINE_TLS_MODE", "disabled"), env("THERMOCLINE_TLS_CLIENT_CA_FILE", ""));
    }

    private static EnvVar env(String name, String value) {
        return new EnvVarBuilder().withName(name).withValue(value).build();
    }
}
