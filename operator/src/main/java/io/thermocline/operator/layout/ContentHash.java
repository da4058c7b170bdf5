package io.thermocline.operator.layout;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A short hash of a content (the rendered config, a CA bundle, a restore's request, a condition's message): written into
 * annotations, so a changed content rolls the pods, and into names, so a changed request makes a new Job. Here, beside
 * the names, because every part of the operator writes one and none should need the data-plane rendering for it.
 */
public final class ContentHash {

    private ContentHash() {}

    /** The first 8 bytes of the text's SHA-256, as 16 hex digits. */
    public static String of(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
