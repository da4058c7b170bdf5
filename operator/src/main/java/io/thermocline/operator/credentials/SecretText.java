package io.thermocline.operator.credentials;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** A Secret's data values are base64 text. */
final class SecretText {

    private SecretText() {
    }

    static String encode(String value) {
        return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
    }

    static String decode(String value) {
        return new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
    }
}
