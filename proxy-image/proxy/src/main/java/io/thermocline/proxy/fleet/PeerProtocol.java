package io.thermocline.proxy.fleet;

import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

import java.security.SecureRandom;

/**
 * The peer link's own commands, carried as OP_MSG on the replicas' peer port: a mutual HMAC handshake
 * ({@code thermoclinePeerHello}, then {@code thermoclinePeerAuth}), then liveness pings and the
 * forwarded cursor commands. Nothing else is accepted on that port.
 */
final class PeerProtocol {
    static final String HELLO = "thermoclinePeerHello";
    static final String AUTH = "thermoclinePeerAuth";
    static final String PING = "thermoclinePeerPing";
    static final String CLIENT = "client";
    static final String SERVER = "server";
    private static final SecureRandom RANDOM = new SecureRandom();

    private PeerProtocol() {
    }

    static byte[] nonce() {
        byte[] n = new byte[24];
        RANDOM.nextBytes(n);
        return n;
    }

    static BsonDocument command(String name) {
        return new BsonDocument(name, new BsonInt32(1)).append("$db", new BsonString("admin"));
    }

    static byte[] bytes(BsonDocument doc, String field) {
        BsonValue v = doc.get(field);
        return v != null && v.isBinary() ? v.asBinary().getData() : null;
    }

    static BsonBinary binary(byte[] b) {
        return new BsonBinary(b);
    }
}
