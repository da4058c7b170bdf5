package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/** A key of a Secret in the resource's namespace. */
public class SecretKeyRef {

    @Required
    @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    @JsonPropertyDescription("Secret name (same namespace as the ThermoclineCluster).")
    public String name;

    @Pattern("^[-._a-zA-Z0-9]+$")
    @JsonPropertyDescription("Key inside the Secret.")
    public String key;

    public SecretKeyRef() {
    }

    public SecretKeyRef(String name, String key) {
        this.name = name;
        this.key = key;
    }

    public String keyOr(String fallback) {
        return key == null || key.isBlank() ? fallback : key;
    }
}
