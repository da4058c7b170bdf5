package io.thermocline.security.scram;

import com.ongres.scram.common.ScramFunctions;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;

/**
 * The server side of one SCRAM conversation (RFC 5802, RFC 7677) as mongod runs it under
 * {@code saslStart}/{@code saslContinue}: server-first, then the client's proof is checked against
 * StoredKey and answered with the server signature, then (unless the client asked
 * {@code skipEmptyExchange}) one empty round. A user that does not exist gets a decoy salt derived
 * from a per-process key, so its conversation looks like a wrong password's and fails at the proof.
 * Not thread-safe: one conversation belongs to one connection, which handles one request at a time.
 */
public final class ScramServerConversation {
    private static final SecureRandom RANDOM = new SecureRandom();

    private enum State { AWAITING_PROOF, AWAITING_EMPTY, DONE, FAILED }

    private final ScramMechanism mechanism;
    private final ClientFirst first;
    private final ScramCredential credential;
    private final boolean knownUser;
    private final String serverFirst;
    private final String nonce;
    private State state = State.AWAITING_PROOF;

    private ScramServerConversation(ScramMechanism mechanism, ClientFirst first, ScramCredential credential, boolean knownUser) {
        this.mechanism = mechanism;
        this.first = first;
        this.credential = credential;
        this.knownUser = knownUser;
        byte[] serverNonce = new byte[24];
        RANDOM.nextBytes(serverNonce);
        this.nonce = first.nonce() + Base64.getEncoder().encodeToString(serverNonce);
        this.serverFirst = "r=" + nonce + ",s=" + Base64.getEncoder().encodeToString(credential.salt()) + ",i=" + credential.iterationCount();
    }

    /**
     * Opens a conversation for a parsed client-first message.
     *
     * @param credential the user's stored credential for this mechanism, or empty when there is none
     * @param decoys     makes the stand-in salt of unknown users stable per process
     */
    public static ScramServerConversation open(ScramMechanism mechanism, ClientFirst first, Optional<ScramCredential> credential,
                                               Decoys decoys) {
        return credential.filter(c -> c.mechanism() == mechanism)
                .map(c -> new ScramServerConversation(mechanism, first, c, true))
                .orElseGet(() -> new ScramServerConversation(mechanism, first, decoys.credential(mechanism, first.user()), false));
    }

    public ScramMechanism mechanism() {
        return mechanism;
    }

    /** The user name the client claims; proven only once {@link #authenticated()} is true. */
    public String user() {
        return first.user();
    }

    public byte[] serverFirst() {
        return serverFirst.getBytes(StandardCharsets.UTF_8);
    }

    public boolean authenticated() {
        return state == State.AWAITING_EMPTY || state == State.DONE;
    }

    public boolean done() {
        return state == State.DONE;
    }

    /**
     * Checks the client-final message; on success returns server-final ({@code v=signature}).
     * With {@code skipEmptyExchange} the conversation is done right away.
     */
    public byte[] receiveProof(byte[] payload, boolean skipEmptyExchange) throws ScramFailure {
        if (state != State.AWAITING_PROOF) {
            throw fail("client-final-message out of order");
        }
        state = State.FAILED;
        String m = ClientFirst.utf8(payload);
        int proofAt = m.lastIndexOf(",p=");
        if (!m.startsWith("c=") || proofAt < 0) {
            throw fail("client-final-message must be c=...,r=...,p=...");
        }
        String withoutProof = m.substring(0, proofAt);
        String[] parts = withoutProof.split(",", -1);
        if (parts.length < 2 || !parts[1].startsWith("r=")) {
            throw fail("client-final-message must be c=...,r=...,p=...");
        }
        byte[] binding = decode(parts[0].substring(2));
        if (!Arrays.equals(binding, first.gs2Header().getBytes(StandardCharsets.UTF_8))) {
            throw fail("channel binding does not match the GS2 header");
        }
        if (!MessageDigest.isEqual(parts[1].substring(2).getBytes(StandardCharsets.UTF_8), nonce.getBytes(StandardCharsets.UTF_8))) {
            throw fail("nonce does not match the conversation's");
        }
        byte[] proof = decode(m.substring(proofAt + 3));
        String authMessage = first.bare() + "," + serverFirst + "," + withoutProof;
        byte[] storedKey = credential.storedKey();
        if (proof.length != storedKey.length) {
            throw fail("proof has the wrong length");
        }
        byte[] signature = ScramFunctions.clientSignature(mechanism.functions(), storedKey, authMessage);
        byte[] clientKey = new byte[proof.length];
        for (int i = 0; i < proof.length; i++) {
            clientKey[i] = (byte) (proof[i] ^ signature[i]);
        }
        boolean proven = MessageDigest.isEqual(ScramFunctions.hash(mechanism.functions(), clientKey), storedKey);
        if (!proven || !knownUser) {
            throw fail(knownUser ? "wrong password" : "no such user");
        }
        state = skipEmptyExchange ? State.DONE : State.AWAITING_EMPTY;
        byte[] serverSignature = ScramFunctions.serverSignature(mechanism.functions(), credential.serverKey(), authMessage);
        return ("v=" + Base64.getEncoder().encodeToString(serverSignature)).getBytes(StandardCharsets.UTF_8);
    }

    /** The last, empty round of a conversation without {@code skipEmptyExchange}. */
    public void receiveEmpty(byte[] payload) throws ScramFailure {
        if (state != State.AWAITING_EMPTY || (payload != null && payload.length != 0)) {
            state = State.FAILED;
            throw fail("unexpected message after the server signature");
        }
        state = State.DONE;
    }

    private ScramFailure fail(String reason) {
        state = State.FAILED;
        return new ScramFailure(reason);
    }

    private byte[] decode(String base64) throws ScramFailure {
        try {
            return Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw fail("malformed base64 in client-final-message");
        }
    }

    /**
     * Stand-in credentials for users that do not exist: a salt that is the same on every attempt
     * (so probing twice does not reveal the user is unknown) and keys nobody can match.
     */
    public static final class Decoys {
        private final byte[] key = new byte[32];

        public Decoys() {
            RANDOM.nextBytes(key);
        }

        ScramCredential credential(ScramMechanism mechanism, String user) {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(key, "HmacSHA256"));
                byte[] digest = mac.doFinal((mechanism.mongoName() + "\0" + user).getBytes(StandardCharsets.UTF_8));
                byte[] salt = Arrays.copyOf(digest, mechanism == ScramMechanism.SCRAM_SHA_1 ? 16 : 28);
                int keyLength = mechanism == ScramMechanism.SCRAM_SHA_1 ? 20 : 32;
                byte[] unmatchable = new byte[keyLength];
                RANDOM.nextBytes(unmatchable);
                return new ScramCredential(mechanism, mechanism.defaultIterations(), salt, unmatchable, unmatchable);
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("the JDK always has HmacSHA256", e);
            }
        }
    }
}
