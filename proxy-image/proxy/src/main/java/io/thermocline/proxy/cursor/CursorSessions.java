package io.thermocline.proxy.cursor;

import io.thermocline.proxy.command.MongoError;
import io.thermocline.security.UserName;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Optional;
import java.util.UUID;

/**
 * mongod's rule for a getMore and the logical session its cursor was opened in. A logical session is
 * the client's {@code lsid.id} together with the digest of the user logged in when it was used
 * (SHA-256 of {@code user@db}, or of the empty string), so the same id sent by two users names two
 * sessions. Where authorization is on and a user is logged in, mongod's cursor pin refuses any getMore
 * in another session than the cursor's (none counts as one) with 13; elsewhere its getMore checks the
 * session ids alone (50736, 50737, 50738). The cursor stays open either way.
 */
public final class CursorSessions {
    private CursorSessions() {
    }

    /** A logical session as mongod identifies it: the client's id and the user's digest. */
    record LogicalSession(BsonValue id, String userDigest) {
        static Optional<LogicalSession> of(BsonDocument lsid, UserName user) {
            BsonValue id = lsid == null ? null : lsid.get("id");
            return id == null ? Optional.empty() : Optional.of(new LogicalSession(id, digestOf(user)));
        }

        /** mongod's {@code LogicalSessionId} in messages: {@code <uuid> - <uid> - <txnNumber> - <txnUUID>}. */
        @Override
        public String toString() {
            return uuidText(id) + " - " + userDigest + " -  - ";
        }
    }

    /**
     * Why the getMore of {@code requester} (in session {@code lsid}, or none) may not continue {@code cursor},
     * or empty when it may as far as sessions go; {@code enforced}: authorization is on.
     */
    public static Optional<RawBsonDocument> refusal(CursorRoute cursor, BsonDocument lsid, UserName requester, boolean enforced) {
        return refusal(cursor, lsid, lsid, requester, enforced);
    }

    /**
     * As {@link #refusal(CursorRoute, BsonDocument, UserName, boolean)}, where the backend's session ids ({@code lsid}, the
     * cursor's {@code lsid}) are compared and the client's ({@code clientLsid}, the cursor's {@code clientLsid}) are shown.
     */
    public static Optional<RawBsonDocument> refusal(CursorRoute cursor, BsonDocument lsid, BsonDocument clientLsid, UserName requester,
                                                    boolean enforced) {
        boolean same = LogicalSession.of(cursor.lsid(), cursor.creator()).equals(LogicalSession.of(lsid, requester));
        Optional<LogicalSession> opened = LogicalSession.of(cursor.clientLsid(), cursor.creator());
        Optional<LogicalSession> now = LogicalSession.of(clientLsid, requester);
        if (enforced && requester != null) {
            if (same) {
                return Optional.empty();
            }
            return Optional.of(MongoError.UNAUTHORIZED.reply("Cursor session id (" + text(opened)
                    + ") is not the same as the operation context's session id (" + text(now) + ")"));
        }
        long id = cursor.proxyId();
        if (now.isPresent() && opened.isEmpty()) {
            return Optional.of(MongoError.GETMORE_IN_SESSION_ON_SESSIONLESS_CURSOR.reply("Cannot run getMore on cursor " + id
                    + ", which was not created in a session, in session " + now.get()));
        }
        if (now.isEmpty() && opened.isPresent()) {
            return Optional.of(MongoError.GETMORE_WITHOUT_LSID.reply("Cannot run getMore on cursor " + id
                    + ", which was created in session " + opened.get() + ", without an lsid"));
        }
        if (now.isPresent() && !same) {
            return Optional.of(MongoError.GETMORE_IN_OTHER_SESSION.reply("Cannot run getMore on cursor " + id
                    + ", which was created in session " + opened.get() + ", in session " + now.get()));
        }
        return Optional.empty();
    }

    private static String text(Optional<LogicalSession> session) {
        return session.map(LogicalSession::toString).orElse("none");
    }

    /** mongod's {@code getLogicalSessionUserDigestFor}: SHA-256 of {@code user@db}, of "" when nobody is logged in; base64 as it prints it. */
    static String digestOf(UserName user) {
        try {
            byte[] name = (user == null ? "" : user.toString()).getBytes(StandardCharsets.UTF_8);
            return Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-256").digest(name));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    private static String uuidText(BsonValue id) {
        if (id instanceof BsonBinary b && b.getData().length == 16
                && (b.getType() == BsonBinarySubType.UUID_STANDARD.getValue() || b.getType() == BsonBinarySubType.UUID_LEGACY.getValue())) {
            ByteBuffer bytes = ByteBuffer.wrap(b.getData());
            return new UUID(bytes.getLong(), bytes.getLong()).toString();
        }
        return String.valueOf(id);
    }
}
