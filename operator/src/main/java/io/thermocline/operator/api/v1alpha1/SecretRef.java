package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/** A whole Secret in the resource's namespace (e.g. a {@code kubernetes.io/tls} Secret with tls.crt and tls.key). */
public class SecretRef {

    @Required
    @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    @JsonPropertyDescription("Secret name (same namespace as the ThermoclineCluster).")
    public String name;

    public SecretRef() {
    }

    public SecretRef(String name) {
        this.name = name;
    }
}
