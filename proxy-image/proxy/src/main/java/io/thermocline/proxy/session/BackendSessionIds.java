package io.thermocline.proxy.session;

import io.thermocline.security.UserName;
import io.thermocline.wire.OpMsg;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Set;

/**
 * mongod keys a logical session by the client's {@code lsid.id} and the digest of the user logged in,
 * so the same id sent by two users names two sessions. The proxy reaches the backend as one user of its
 * own, so it must do that keying itself: every {@code lsid} a client sends is replaced, where the
 * request enters, by one derived from the id and the client's user. Two users can then never name one
 * backend session (that would take a SHA-256 collision), whatever ids they send.
 *
 * <p>The derivation is a plain hash, with no key: it needs no secret to keep users apart (a user cannot
 * send a backend id, every id it sends is derived again with its own name), and without a key it is the
 * same on every fleet replica and across restarts by construction, so a transaction or a retried write
 * continues on any replica with no configuration to keep in step.
 */
public final class BackendSessionIds {
    /** Commands whose first field lists sessions ({@code [{id: ...}]}): each is the user's own. */
    public static final Set<String> LISTING_SESSIONS = Set.of("endSessions", "killSessions", "refreshSessions");
    private static final byte[] DOMAIN = "thermocline backend session v1\0".getBytes(StandardCharsets.UTF_8);

    private BackendSessionIds() {
    }

    /** The backend's id for the session {@code clientId} of {@code user} (null: nobody logged in): a UUID (subtype 4). */
    public static BsonBinary backendId(BsonValue clientId, UserName user) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(DOMAIN);
            sha.update(userDigest(user));
            // the id's BSON encoding, type included: any value a client sends is derived, none passes unchanged
            ByteBuffer encoded = OpMsg.raw(new BsonDocument("id", clientId)).getByteBuffer().asNIO();
            byte[] bytes = new byte[encoded.remaining()];
            encoded.get(bytes);
            sha.update(bytes);
            byte[] uuid = Arrays.copyOf(sha.digest(), 16);
            uuid[6] = (byte) ((uuid[6] & 0x0f) | 0x80); // RFC 9562 version 8: a name-based id of our own
            uuid[8] = (byte) ((uuid[8] & 0x3f) | 0x80);
            return new BsonBinary(BsonBinarySubType.UUID_STANDARD, uuid);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** {@code lsid} with its {@code id} replaced by the backend's for {@code user}; other fields as sent; null stays null. */
    public static BsonDocument backendLsid(BsonDocument lsid, UserName user) {
        if (lsid == null || !lsid.containsKey("id")) {
            return lsid;
        }
        BsonDocument out = new BsonDocument();
        lsid.forEach((field, value) -> out.put(field, field.equals("id") ? backendId(value, user) : value));
        return out;
    }

    /** A list of sessions ({@code endSessions: [{id}, ...]}) as the backend knows them; anything else as sent. */
    public static BsonValue backendLsids(BsonValue listed, UserName user) {
        if (!(listed instanceof BsonArray array)) {
            return listed;
        }
        BsonArray out = new BsonArray();
        for (BsonValue v : array) {
            out.add(v instanceof BsonDocument d ? backendLsid(d, user) : v);
        }
        return out;
    }

    /** mongod's {@code getLogicalSessionUserDigestFor}: SHA-256 of {@code user@db}, of "" when nobody is logged in. */
    public static byte[] userDigest(UserName user) {
        try {
            return MessageDigest.getInstance("SHA-256").digest((user == null ? "" : user.toString()).getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}
