package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;

/** The user's existing replica set, referenced by a Secret holding its connection string. */
public class ArchiveSpec {

    public static final String DEFAULT_URI_KEY = "uri";

    @Required
    @JsonPropertyDescription("Secret key holding the archive's mongodb:// connection string (key defaults to 'uri').")
    public SecretKeyRef uriSecretRef;

    @JsonPropertyDescription("Optional TLS settings for reaching the archive.")
    public TlsSpec tls;

    /** TLS to the archive: a CA bundle the data plane and the operator's probe trust. */
    public static class TlsSpec {

        @JsonPropertyDescription("Secret key holding the PEM CA bundle (key defaults to 'ca.crt').")
        public SecretKeyRef caSecretRef;
    }
}
