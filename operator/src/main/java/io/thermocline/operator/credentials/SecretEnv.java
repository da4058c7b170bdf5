package io.thermocline.operator.credentials;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;

/** An environment variable read from a Secret key: how passwords reach pods without passing through specs or logs. */
public final class SecretEnv {

    private SecretEnv() {
    }

    public static EnvVar of(String name, String secret, String key) {
        return new EnvVarBuilder().withName(name)
                .withNewValueFrom().withNewSecretKeyRef().withName(secret).withKey(key).endSecretKeyRef().endValueFrom()
                .build();
    }
}
