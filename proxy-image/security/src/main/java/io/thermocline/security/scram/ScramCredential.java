package io.thermocline.security.scram;

import com.ongres.scram.common.ScramFunctions;
import com.ongres.scram.common.StringPreparation;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * What a server keeps of a password for one mechanism, as mongod stores it in
 * {@code admin.system.users} and returns it from {@code usersInfo} with {@code showCredentials}:
 * the salt, the iteration count, StoredKey = H(ClientKey) and ServerKey. The password itself is
 * never kept, and {@link #toString()} shows none of the keys.
 */
public record ScramCredential(ScramMechanism mechanism, int iterationCount, byte[] salt, byte[] storedKey, byte[] serverKey) {

    private static final SecureRandom RANDOM = new SecureRandom();

    public ScramCredential {
        salt = salt.clone();
        storedKey = storedKey.clone();
        serverKey = serverKey.clone();
    }

    /** Derives a new credential from a password, with a fresh salt, as {@code createUser} does. */
    public static ScramCredential derive(ScramMechanism mechanism, String user, char[] password, int iterations) {
        byte[] salt = new byte[mechanism == ScramMechanism.SCRAM_SHA_1 ? 16 : 28];
        RANDOM.nextBytes(salt);
        return derive(mechanism, user, password, salt, iterations);
    }

    public static ScramCredential derive(ScramMechanism mechanism, String user, char[] password, byte[] salt, int iterations) {
        char[] prepared = mechanism.preparedPassword(user, password);
        try {
            byte[] salted = ScramFunctions.saltedPassword(mechanism.functions(), StringPreparation.NO_PREPARATION, prepared, salt, iterations);
            byte[] clientKey = ScramFunctions.clientKey(mechanism.functions(), salted);
            return new ScramCredential(mechanism, iterations, salt, ScramFunctions.storedKey(mechanism.functions(), clientKey),
                    ScramFunctions.serverKey(mechanism.functions(), salted));
        } finally {
            Arrays.fill(prepared, '\0');
        }
    }

    /** Reads the document under {@code credentials.<mechanism>} of a {@code usersInfo} reply. */
    public static ScramCredential fromDocument(ScramMechanism mechanism, BsonDocument d) {
        BsonValue iterations = d.get("iterationCount");
        if (iterations == null || !iterations.isNumber()) {
            throw new IllegalArgumentException(mechanism.mongoName() + " credential has no iterationCount");
        }
        return new ScramCredential(mechanism, iterations.asNumber().intValue(), base64(d, "salt", mechanism),
                base64(d, "storedKey", mechanism), base64(d, "serverKey", mechanism));
    }

    private static byte[] base64(BsonDocument d, String field, ScramMechanism mechanism) {
        BsonValue v = d.get(field);
        if (v == null || !v.isString()) {
            throw new IllegalArgumentException(mechanism.mongoName() + " credential has no " + field);
        }
        return Base64.getDecoder().decode(v.asString().getValue());
    }

    public BsonDocument toDocument() {
        Base64.Encoder b64 = Base64.getEncoder();
        return new BsonDocument("iterationCount", new BsonInt32(iterationCount))
                .append("salt", new BsonString(b64.encodeToString(salt)))
                .append("storedKey", new BsonString(b64.encodeToString(storedKey)))
                .append("serverKey", new BsonString(b64.encodeToString(serverKey)));
    }

    @Override
    public byte[] salt() {
        return salt.clone();
    }

    @Override
    public byte[] storedKey() {
        return storedKey.clone();
    }

    @Override
    public byte[] serverKey() {
        return serverKey.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScramCredential c && c.mechanism == mechanism && c.iterationCount == iterationCount
                && Arrays.equals(c.salt, salt) && Arrays.equals(c.storedKey, storedKey) && Arrays.equals(c.serverKey, serverKey);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(storedKey);
    }

    @Override
    public String toString() {
        return "ScramCredential[" + mechanism.mongoName() + ", iterationCount=" + iterationCount + ", keys redacted]";
    }
}
