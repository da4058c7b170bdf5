package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.Secret;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.thermocline.operator.api.v1alpha1.ThermoclineCluster;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * Reads a generated Secret from the API server, not the informer cache: a cache that has
 * not seen the Secret yet must never cause a new password to replace a live one.
 */
final class StoredSecret {

    private StoredSecret() {
    }

    static Map<String, String> data(Context<ThermoclineCluster> context, String namespace, String name) {
        Secret secret = context.getClient().secrets().inNamespace(namespace).withName(name).get();
        return secret == null || secret.getData() == null ? Map.of() : secret.getData();
    }

    static String encode(String value) {
        return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
    }

    static String decode(String value) {
        return new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
    }
}
