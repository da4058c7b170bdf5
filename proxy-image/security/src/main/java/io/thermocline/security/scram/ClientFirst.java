package io.thermocline.security.scram;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * A parsed client-first-message (RFC 5802 section 7): GS2 header, user name (unescaped) and nonce.
 * Channel binding ({@code p=}) and mandatory extensions ({@code m=}) are refused, as mongod does.
 */
public record ClientFirst(String gs2Header, String user, String nonce, String bare) {
    /** Far above any real client-first message; stops a client from making the server parse megabytes. */
    static final int MAX_LENGTH = 4096;

    public static ClientFirst parse(byte[] payload) throws ScramFailure {
        String m = utf8(payload);
        if (!(m.startsWith("n,") || m.startsWith("y,"))) {
            throw new ScramFailure(m.startsWith("p=") ? "channel binding is not supported" : "malformed GS2 header");
        }
        int second = m.indexOf(',', 2);
        if (second < 0) {
            throw new ScramFailure("malformed GS2 header");
        }
        String authzid = m.substring(2, second);
        String bare = m.substring(second + 1);
        String[] parts = bare.split(",", -1);
        if (parts.length < 2 || !parts[0].startsWith("n=") || !parts[1].startsWith("r=")) {
            throw new ScramFailure("client-first-message must start with n=user,r=nonce");
        }
        String user = unescape(parts[0].substring(2));
        String nonce = parts[1].substring(2);
        if (user.isEmpty() || !printable(nonce)) {
            throw new ScramFailure("empty user name or malformed nonce");
        }
        if (!authzid.isEmpty() && !(authzid.startsWith("a=") && unescape(authzid.substring(2)).equals(user))) {
            throw new ScramFailure("an authorization identity other than the user is not supported");
        }
        return new ClientFirst(m.substring(0, second + 1), user, nonce, bare);
    }

    static String utf8(byte[] payload) throws ScramFailure {
        if (payload == null || payload.length == 0 || payload.length > MAX_LENGTH) {
            throw new ScramFailure("empty or oversized SCRAM message (" + (payload == null ? 0 : payload.length) + " bytes)");
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(payload)).toString();
        } catch (CharacterCodingException e) {
            throw new ScramFailure("SCRAM message is not UTF-8");
        }
    }

    /** saslname: ',' is sent as =2C and '=' as =3D; any other '=' is malformed. */
    static String unescape(String saslName) throws ScramFailure {
        StringBuilder out = new StringBuilder(saslName.length());
        for (int i = 0; i < saslName.length(); i++) {
            char c = saslName.charAt(i);
            if (c != '=') {
                out.append(c);
            } else if (saslName.startsWith("=2C", i)) {
                out.append(',');
                i += 2;
            } else if (saslName.startsWith("=3D", i)) {
                out.append('=');
                i += 2;
            } else {
                throw new ScramFailure("malformed escape in user name");
            }
        }
        return out.toString();
    }

    /** RFC 5802 nonce: printable ASCII except ','. */
    static boolean printable(String nonce) {
        if (nonce.isEmpty()) {
            return false;
        }
        for (int i = 0; i < nonce.length(); i++) {
            char c = nonce.charAt(i);
            if (c < 0x21 || c > 0x7e || c == ',') {
                return false;
            }
        }
        return true;
    }
}
