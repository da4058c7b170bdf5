package io.thermocline.security.scram;

import com.ongres.scram.common.ScramFunctions;
import com.ongres.scram.common.StringPreparation;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * The client side of SCRAM, for the data plane's own logins to a tier over its raw pooled
 * connections (the drivers do this for themselves). It checks the server's signature, so a
 * server that does not know the password cannot pass for the tier.
 */
public final class ScramClientConversation {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ScramMechanism mechanism;
    private final String user;
    private final char[] password;
    private final String nonce;
    private byte[] serverSignature;

    public ScramClientConversation(ScramMechanism mechanism, String user, char[] password) {
        this.mechanism = mechanism;
        this.user = user;
        this.password = password.clone();
        byte[] n = new byte[24];
        RANDOM.nextBytes(n);
        this.nonce = Base64.getEncoder().encodeToString(n);
    }

    private String bare() {
        return "n=" + user.replace("=", "=3D").replace(",", "=2C") + ",r=" + nonce;
    }

    public byte[] clientFirst() {
        return ("n,," + bare()).getBytes(StandardCharsets.UTF_8);
    }

    /** The proof for the server's challenge; refuses a challenge that does not extend our nonce or asks too few iterations. */
    public byte[] clientFinal(byte[] serverFirstBytes) throws ScramFailure {
        String serverFirst = ClientFirst.utf8(serverFirstBytes);
        String[] attrs = serverFirst.split(",");
        if (attrs.length < 3 || !attrs[0].startsWith("r=" + nonce) || !attrs[1].startsWith("s=") || !attrs[2].startsWith("i=")) {
            throw new ScramFailure("malformed server-first-message");
        }
        int iterations;
        byte[] salt;
        try {
            iterations = Integer.parseInt(attrs[2].substring(2));
            salt = Base64.getDecoder().decode(attrs[1].substring(2));
        } catch (IllegalArgumentException e) {
            throw new ScramFailure("malformed server-first-message");
        }
        if (iterations < ScramMechanism.MIN_ITERATIONS) {
            throw new ScramFailure("the server asked for only " + iterations + " iterations");
        }
        char[] prepared = mechanism.preparedPassword(user, password);
        byte[] salted;
        try {
            salted = ScramFunctions.saltedPassword(mechanism.functions(), StringPreparation.NO_PREPARATION, prepared, salt, iterations);
        } finally {
            Arrays.fill(prepared, '\0');
        }
        String withoutProof = "c=biws,r=" + attrs[0].substring(2);
        String authMessage = bare() + "," + serverFirst + "," + withoutProof;
        byte[] clientKey = ScramFunctions.clientKey(mechanism.functions(), salted);
        byte[] signature = ScramFunctions.clientSignature(mechanism.functions(), ScramFunctions.storedKey(mechanism.functions(), clientKey),
                authMessage);
        serverSignature = ScramFunctions.serverSignature(mechanism.functions(), ScramFunctions.serverKey(mechanism.functions(), salted),
                authMessage);
        return (withoutProof + ",p=" + Base64.getEncoder().encodeToString(ScramFunctions.clientProof(clientKey, signature)))
                .getBytes(StandardCharsets.UTF_8);
    }

    /** Checks server-final ({@code v=...}): only a server holding this user's ServerKey can produce it. */
    public void verifyServerFinal(byte[] serverFinal) throws ScramFailure {
        String m = ClientFirst.utf8(serverFinal);
        if (serverSignature == null || !m.startsWith("v=")) {
            throw new ScramFailure("the server did not prove it knows the password");
        }
        byte[] v;
        try {
            v = Base64.getDecoder().decode(m.substring(2).split(",")[0]);
        } catch (IllegalArgumentException e) {
            throw new ScramFailure("malformed server signature");
        }
        if (!MessageDigest.isEqual(v, serverSignature)) {
            throw new ScramFailure("the server's signature does not match: it does not know this user's password");
        }
    }
}
