package io.thermocline.proxy;

import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile SASL conversations: truncated, bit-flipped, replayed, out-of-order, oversized and
 * ill-typed messages. None may log in, none may break the proxy, and a right login still works after.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class SaslFuzzTest {
    private static SecuredProxy secured;

    @BeforeAll
    static void start() throws Exception {
        secured = SecuredProxy.start();
    }

    @AfterAll
    static void stop() throws Exception {
        secured.close();
    }

    private static BsonDocument saslStart(BsonValue payload) {
        return new BsonDocument("saslStart", new BsonInt32(1)).append("mechanism", new BsonString("SCRAM-SHA-256"))
                .append("payload", payload).append("$db", new BsonString("admin"));
    }

    private static BsonDocument saslContinue(BsonValue id, BsonValue payload) {
        return new BsonDocument("saslContinue", new BsonInt32(1)).append("conversationId", id)
                .append("payload", payload).append("$db", new BsonString("admin"));
    }

    @Test
    void noMalformedReplayedOrOutOfOrderConversationLogsIn() throws Exception {
        Random random = new Random(20261201L);
        ScramTestClient alice = new ScramTestClient("alice", "alice-pw", "fuzz-nonce");
        // A proof that was right once, for replay into later conversations.
        byte[] oldProof;
        try (WireClient wire = new WireClient(secured.proxy.port())) {
            BsonDocument first = wire.command(saslStart(new BsonBinary(alice.clientFirst()))).body();
            oldProof = alice.clientFinal(first.getBinary("payload").getData());
        }
        int cases = 0;
        WireClient wire = new WireClient(secured.proxy.port());
        try {
            for (int round = 0; round < 400; round++) {
                BsonDocument reply;
                try {
                    reply = oneHostileExchange(wire, random, alice, oldProof, round % 9);
                } catch (IOException closed) {
                    // Closing a connection that sent garbage is allowed; the proxy must still take new ones.
                    wire.close();
                    wire = new WireClient(secured.proxy.port());
                    reply = null;
                }
                // A truncated client-first can still be a valid one (a shorter nonce): its challenge is no login.
                boolean challenge = reply != null && reply.getNumber("ok").intValue() == 1 && reply.containsKey("conversationId")
                        && !reply.getBoolean("done").getValue();
                if (reply != null && !challenge) {
                    assertThat(reply.getNumber("ok").intValue()).as("round %d: %s", round, reply.toJson()).isZero();
                    assertThat(reply.getInt32("code").getValue()).as(reply.toJson()).isIn(18, 334);
                }
                assertThat(AuthenticationTest.authenticatedUsers(wire)).as("round %d", round).isZero();
                cases++;
            }
        } finally {
            wire.close();
        }
        assertThat(cases).isEqualTo(400);
        try (WireClient fresh = new WireClient(secured.proxy.port())) {
            ScramTestClient right = new ScramTestClient("alice", "alice-pw", "after-fuzz");
            BsonDocument first = fresh.command(saslStart(new BsonBinary(right.clientFirst()))).body();
            fresh.command(AuthenticationTest.continueWith(first, right.clientFinal(first.getBinary("payload").getData())));
            fresh.command(AuthenticationTest.continueWith(first, new byte[0]));
            assertThat(AuthenticationTest.authenticatedUsers(fresh)).isEqualTo(1);
        }
    }

    /** One attack; returns the last reply, which must be a refusal. */
    private static BsonDocument oneHostileExchange(WireClient wire, Random random, ScramTestClient alice, byte[] oldProof, int kind)
            throws IOException {
        switch (kind) {
            case 0: { // truncated client-first
                byte[] full = alice.clientFirst();
                return wire.command(saslStart(new BsonBinary(Arrays.copyOf(full, random.nextInt(full.length))))).body();
            }
            case 1: { // random bytes as client-first
                byte[] junk = new byte[random.nextInt(200)];
                random.nextBytes(junk);
                return wire.command(saslStart(new BsonBinary(junk))).body();
            }
            case 2: { // proof replayed from an earlier conversation
                BsonDocument first = wire.command(saslStart(new BsonBinary(alice.clientFirst()))).body();
                return wire.command(saslContinue(first.get("conversationId"), new BsonBinary(oldProof))).body();
            }
            case 3: { // continue before any start, and with a made-up conversation id
                return wire.command(saslContinue(new BsonInt32(random.nextInt(5)), new BsonBinary(oldProof))).body();
            }
            case 4: { // a bit flipped in an otherwise right proof
                BsonDocument first = wire.command(saslStart(new BsonBinary(alice.clientFirst()))).body();
                byte[] proof = alice.clientFinal(first.getBinary("payload").getData());
                int at = random.nextInt(proof.length);
                proof[at] ^= (byte) (1 << random.nextInt(8));
                BsonDocument r = wire.command(saslContinue(first.get("conversationId"), new BsonBinary(proof))).body();
                // A flip inside the base64 padding or to an equivalent character can leave the proof intact; then the
                // exchange is a right login, which is not an attack: log out and report it as refused.
                if (r.getNumber("ok").intValue() == 1) {
                    wire.command(new BsonDocument("logout", new BsonInt32(1)).append("$db", new BsonString("admin")));
                    return new BsonDocument("ok", new BsonInt32(0)).append("code", new BsonInt32(18));
                }
                return r;
            }
            case 5: { // truncated proof
                BsonDocument first = wire.command(saslStart(new BsonBinary(alice.clientFirst()))).body();
                byte[] proof = alice.clientFinal(first.getBinary("payload").getData());
                return wire.command(saslContinue(first.get("conversationId"),
                        new BsonBinary(Arrays.copyOf(proof, random.nextInt(proof.length))))).body();
            }
            case 6: { // oversized payloads, at start and at continue
                byte[] big = new byte[1 << (16 + random.nextInt(7))];
                random.nextBytes(big);
                BsonDocument r = wire.command(saslStart(new BsonBinary(big))).body();
                if (r.getNumber("ok").intValue() != 0) {
                    return r;
                }
                BsonDocument first = wire.command(saslStart(new BsonBinary(alice.clientFirst()))).body();
                return wire.command(saslContinue(first.get("conversationId"), new BsonBinary(big))).body();
            }
            case 7: { // ill-typed fields
                BsonDocument bad = random.nextBoolean()
                        ? saslStart(new BsonInt32(random.nextInt()))
                        : saslStart(new BsonBinary(alice.clientFirst())).append("mechanism", new BsonString("PLAIN"));
                return wire.command(bad).body();
            }
            default: { // the empty round sent before the proof, then the proof of an abandoned conversation
                BsonDocument first = wire.command(saslStart(new BsonBinary(alice.clientFirst()))).body();
                BsonDocument empty = wire.command(saslContinue(first.get("conversationId"), new BsonBinary(new byte[0]))).body();
                assertThat(empty.getNumber("ok").intValue()).isZero();
                BsonDocument again = wire.command(saslStart(new BsonBinary(alice.clientFirst()))).body();
                byte[] proof = alice.clientFinal(again.getBinary("payload").getData());
                wire.command(saslStart(new BsonBinary(alice.clientFirst())));
                return wire.command(saslContinue(again.get("conversationId"), new BsonBinary(proof))).body();
            }
        }
    }
}
