package io.thermocline.operator.credentials;

import java.security.SecureRandom;
import java.util.Base64;

/** Random material for generated Secrets. */
final class GeneratedSecrets {

    private static final SecureRandom RANDOM = new SecureRandom();

    private GeneratedSecrets() {
    }

    /** A mongod keyfile: 756 base64 characters, the documented maximum-strength size. */
    static String keyfile() {
        return random(567);
    }

    /** The fleet's peer-link HMAC key: 32 random bytes, as base64 text (the proxy reads the file's text as the key). */
    static String peerKey() {
        return random(32);
    }

    /** A password of URL-safe characters, so it can go into a connection string unescaped. */
    static String password() {
        return random(24).replace('+', 'x').replace('/', 'y').replace("=", "");
    }

    private static String random(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return Base64.getEncoder().encodeToString(b);
    }
}
