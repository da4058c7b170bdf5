package io.thermocline.operator.archive;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.thermocline.operator.api.v1alpha1.ArchiveSpec;
import io.thermocline.operator.api.v1alpha1.SecretKeyRef;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** Reads the archive's connection string (and CA) from the user's Secrets, with actionable reasons when it cannot. */
public final class ArchiveSecrets {

    private ArchiveSecrets() {
    }

    /** Either a connection or the reason there is none. */
    public sealed interface Access {
    }

    public record Found(ArchiveConnection connection) implements Access {
    }

    public record Missing(ArchiveReport.Unusable problem) implements Access {
    }

    /** Finds a Secret of the cluster's namespace by name; null when there is none. */
    @FunctionalInterface
    public interface Lookup {
        Secret find(String name);
    }

    /** A GET per Secret, where no informer cache is at hand. */
    public static Lookup direct(KubernetesClient client, String namespace) {
        return name -> client.secrets().inNamespace(namespace).withName(name).get();
    }

    public static Access read(Lookup secrets, String namespace, ArchiveSpec archive) {
        SecretKeyRef ref = archive.uriSecretRef;
        if (ref == null || ref.name == null) {
            return new Missing(new ArchiveReport.Unusable("SecretNotFound", "spec.archive.uriSecretRef.name is not set"));
        }
        String key = ref.keyOr(ArchiveSpec.DEFAULT_URI_KEY);
        String uri = value(secrets, ref.name, key);
        if (uri == null) {
            return new Missing(new ArchiveReport.Unusable("SecretNotFound",
                    "Secret " + namespace + "/" + ref.name + " with key '" + key
                            + "' holding the archive's connection string does not exist; create it (see examples/samples)"));
        }
        if (!(uri.startsWith("mongodb://") || uri.startsWith("mongodb+srv://"))) {
            return new Missing(new ArchiveReport.Unusable("InvalidUri",
                    "Secret " + ref.name + " key '" + key + "' does not start with mongodb:// or mongodb+srv://; fix its value"));
        }
        String ca = null;
        if (archive.tls != null && archive.tls.caSecretRef != null) {
            SecretKeyRef caRef = archive.tls.caSecretRef;
            ca = value(secrets, caRef.name, caRef.keyOr("ca.crt"));
            if (ca == null) {
                return new Missing(new ArchiveReport.Unusable("CaSecretNotFound",
                        "Secret " + namespace + "/" + caRef.name + " with key '" + caRef.keyOr("ca.crt")
                                + "' (spec.archive.tls.caSecretRef) does not exist; create it or remove spec.archive.tls"));
            }
        }
        return new Found(new ArchiveConnection(uri.trim(), ca));
    }

    private static String value(Lookup secrets, String name, String key) {
        Secret secret = secrets.find(name);
        if (secret == null) {
            return null;
        }
        if (secret.getData() != null && secret.getData().get(key) != null) {
            return new String(Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
        }
        return secret.getStringData() == null ? null : secret.getStringData().get(key);
    }
}
