package io.thermocline.proxy;

import io.thermocline.wire.Compressor;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 25 item 7: before a required login, a message may not be (or inflate to) more than 1 MiB, so a flood of
 * unauthenticated connections cannot make the proxy buffer or inflate 48 MB each; after the login the server's limit applies.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnauthenticatedMessageLimitTest {

    private static OpMsg bigPing(WireClient wire) {
        // 2 MiB of one repeated character: zlib makes it a few KB on the wire
        return OpMsg.request(wire.nextRequestId(), new BsonDocument("ping", new BsonInt32(1))
                .append("padding", new BsonString("0".repeat(2 * 1024 * 1024))).append("$db", new BsonString("admin")));
    }

    @Test
    void beforeALoginACompressedMessageInflatingPastTheSmallLimitIsRefusedAfterItIsServed() throws Exception {
        try (SecuredProxy secured = SecuredProxy.start()) {
            try (WireClient stranger = new WireClient(secured.proxy.port())) {
                stranger.send(bigPing(stranger), Compressor.ZLIB);
                BsonDocument reply = ((OpMsg) stranger.receive().message()).body();
                assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isZero();
                assertThat(reply.getString("errmsg").getValue()).contains("OP_COMPRESSED declares");
            }
            try (WireClient stranger = new WireClient(secured.proxy.port())) {
                boolean closed;
                try {
                    stranger.send(bigPing(stranger), null);
                    closed = stranger.closedByPeer();
                } catch (java.net.SocketException e) {
                    closed = true; // closed while the client was still writing the frame
                }
                assertThat(closed).as("a 2 MiB frame before a login").isTrue();
            }
            try (WireClient alice = new WireClient(secured.proxy.port()).login("alice", "alice-pw")) {
                alice.send(bigPing(alice), Compressor.ZLIB);
                BsonDocument reply = ((OpMsg) alice.receive().message()).body();
                assertThat(reply.getNumber("ok").intValue()).as(reply.toJson()).isEqualTo(1);
            }
        }
    }
}
