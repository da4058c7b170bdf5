package io.thermocline.config;

import java.util.List;

/**
 * TLS between clients and the proxy, and from the data plane to the tiers (docs/security.md).
 *
 * @param mode            as mongod's {@code net.tls.mode}: {@code disabled}, {@code allowTLS}/{@code allowed}
 *                        (plain text and TLS accepted), {@code preferTLS}/{@code preferred} (both accepted),
 *                        {@code requireTLS}/{@code required} (plain text refused)
 * @param certificateFile PEM certificate chain the proxy presents; re-read when it changes
 * @param keyFile         PEM private key (PKCS#8) of that certificate
 * @param clientCaFile    PEM CAs whose client certificates are asked for and verified; none: no client certificates
 * @param tierCaFile      PEM CAs that sign the tiers' certificates; when set, the data plane connects to both tiers
 *                        over TLS and checks their host names
 * @param allowConnectionsWithoutCertificates as mongod's {@code net.tls.allowConnectionsWithoutCertificates}, with
 *                        {@code clientCaFile}: {@code false} fails the TLS handshake of a client that sends no
 *                        certificate; unset or {@code true} (the default, unlike mongod's) lets it connect
 */
public record TlsConfig(String mode, String certificateFile, String keyFile, String clientCaFile, String tierCaFile,
                        Boolean allowConnectionsWithoutCertificates) {
    public static final List<String> MODES = List.of("disabled", "allowed", "preferred", "required");

    /** Client certificates optional (configs from before the setting). */
    public TlsConfig(String mode, String certificateFile, String keyFile, String clientCaFile, String tierCaFile) {
        this(mode, certificateFile, keyFile, clientCaFile, tierCaFile, null);
    }

    public static TlsConfig defaults() {
        return new TlsConfig("disabled", null, null, null, null, null);
    }

    /** Whether a TLS client must present a certificate the client CAs verify. */
    public boolean clientCertificatesRequired() {
        return hasClientCa() && Boolean.FALSE.equals(allowConnectionsWithoutCertificates);
    }

    public boolean hasClientCa() {
        return clientCaFile != null && !clientCaFile.isBlank();
    }

    /** mongod's spellings ({@code requireTLS} ...) and ours name the same modes. */
    public String normalizedMode() {
        if (mode == null) {
            return null;
        }
        return switch (mode) {
            case "allowTLS" -> "allowed";
            case "preferTLS" -> "preferred";
            case "requireTLS" -> "required";
            default -> mode;
        };
    }
}
