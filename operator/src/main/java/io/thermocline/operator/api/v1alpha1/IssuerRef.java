package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/** A cert-manager issuer: the operator then asks cert-manager for the fast tier's certificate instead of signing it. */
public class IssuerRef {

    @Required
    @Pattern("^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    @JsonPropertyDescription("Name of the Issuer (same namespace) or ClusterIssuer.")
    public String name;

    @Default("Issuer")
    @Pattern("^(Issuer|ClusterIssuer)$")
    @JsonPropertyDescription("Issuer or ClusterIssuer.")
    public String kind = "Issuer";

    @Default("cert-manager.io")
    @JsonPropertyDescription("API group of the issuer.")
    public String group = "cert-manager.io";

    public IssuerRef() {
    }

    public IssuerRef(String name, String kind) {
        this.name = name;
        this.kind = kind;
    }
}
