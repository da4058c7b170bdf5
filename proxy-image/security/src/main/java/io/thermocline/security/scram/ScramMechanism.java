package io.thermocline.security.scram;

import com.ongres.scram.common.StringPreparation;

import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The two SCRAM mechanisms MongoDB speaks, with MongoDB's own password preparation: SCRAM-SHA-1
 * hashes {@code md5(user:mongo:password)} (hex) and never SASLpreps it; SCRAM-SHA-256 SASLpreps the
 * password (RFC 4013) and uses it as it is.
 */
public enum ScramMechanism {
    SCRAM_SHA_1("SCRAM-SHA-1", com.ongres.scram.common.ScramMechanism.SCRAM_SHA_1, 10_000),
    SCRAM_SHA_256("SCRAM-SHA-256", com.ongres.scram.common.ScramMechanism.SCRAM_SHA_256, 15_000);

    /** mongod refuses fewer iterations than this for either mechanism. */
    public static final int MIN_ITERATIONS = 4096;

    private final String mongoName;
    private final com.ongres.scram.common.ScramMechanism functions;
    private final int defaultIterations;

    ScramMechanism(String mongoName, com.ongres.scram.common.ScramMechanism functions, int defaultIterations) {
        this.mongoName = mongoName;
        this.functions = functions;
        this.defaultIterations = defaultIterations;
    }

    /** The name used in {@code saslStart.mechanism}, {@code saslSupportedMechs} and stored credentials. */
    public String mongoName() {
        return mongoName;
    }

    /** mongod's default {@code scramIterationCount} / {@code scramSHA256IterationCount}. */
    public int defaultIterations() {
        return defaultIterations;
    }

    com.ongres.scram.common.ScramMechanism functions() {
        return functions;
    }

    public static Optional<ScramMechanism> byMongoName(String name) {
        for (ScramMechanism m : values()) {
            if (m.mongoName.equals(name)) {
                return Optional.of(m);
            }
        }
        return Optional.empty();
    }

    /**
     * The characters that are salted and hashed for {@code user}'s {@code password}.
     *
     * @throws IllegalArgumentException when SASLprep prohibits a character of the password
     */
    char[] preparedPassword(String user, char[] password) {
        if (this == SCRAM_SHA_256) {
            return StringPreparation.SASL_PREPARATION.normalize(password);
        }
        try {
            MessageDigest md5 = MessageDigest.getInstance("MD5");
            md5.update((user + ":mongo:").getBytes(StandardCharsets.UTF_8));
            md5.update(StandardCharsets.UTF_8.encode(CharBuffer.wrap(password)));
            return HexFormat.of().formatHex(md5.digest()).toCharArray();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has MD5", e);
        }
    }
}
