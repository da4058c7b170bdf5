package io.thermocline.proxy.fleet;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;

/**
 * The secret every replica of one cluster shares (a mounted Secret file): the peer link admits only a
 * replica that proves it holds it, with an HMAC-SHA256 over both sides' fresh nonces, so the proof of
 * one connection is worth nothing on another. Never logged.
 */
public final class ClusterSecret {
    static final int MIN_BYTES = 16;

    private final byte[] key;

    private ClusterSecret(byte[] key) {
        if (key.length < MIN_BYTES) {
            throw new IllegalArgumentException("the cluster secret has " + key.length + " bytes; use at least " + MIN_BYTES
                    + " random bytes (e.g. openssl rand -base64 32)");
        }
        this.key = key.clone();
    }

    public static ClusterSecret of(byte[] key) {
        return new ClusterSecret(key);
    }

    /** The file's content without a trailing newline (so an editor's or kubectl's newline does not change the secret). */
    public static ClusterSecret read(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8).strip();
            return new ClusterSecret(text.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalArgumentException("fleet.secretFile: cannot read " + file + " (" + e.getMessage()
                    + "); mount the cluster's peer secret there", e);
        }
    }

    /** The proof of {@code role} ("client" or "server") for one connection's two nonces. */
    byte[] proof(String role, byte[] clientNonce, byte[] serverNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update(role.getBytes(StandardCharsets.US_ASCII));
            mac.update(clientNonce);
            mac.update(serverNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK always has HmacSHA256", e);
        }
    }

    boolean verify(byte[] proof, String role, byte[] clientNonce, byte[] serverNonce) {
        return proof != null && MessageDigest.isEqual(proof, proof(role, clientNonce, serverNonce));
    }

    @Override
    public String toString() {
        return "ClusterSecret[" + key.length + " bytes]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterSecret s && MessageDigest.isEqual(key, s.key);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(key);
    }
}
