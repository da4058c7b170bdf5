package io.thermocline.proxy;

import io.thermocline.security.authentication.LoginThrottle;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Guessing passwords from one address gets slower with each wrong guess, whatever connection it uses. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailedLoginDelayTest {

    private static BsonDocument wrongGuess(WireClient wire, String nonce) throws Exception {
        ScramTestClient guess = new ScramTestClient("alice", "guess", nonce);
        BsonDocument first = wire.command(new BsonDocument("saslStart", new BsonInt32(1)).append("mechanism", new BsonString("SCRAM-SHA-256"))
                .append("payload", new BsonBinary(guess.clientFirst())).append("$db", new BsonString("admin"))).body();
        return wire.command(AuthenticationTest.continueWith(first, guess.clientFinal(first.getBinary("payload").getData()))).body();
    }

    @Test
    void eachFailureFromAnAddressDelaysItsNextAttemptLonger() throws Exception {
        try (SecuredProxy secured = SecuredProxy.start(new LoginThrottle(Duration.ofMillis(200), Duration.ofSeconds(5), Duration.ofMinutes(10)))) {
            long start = System.nanoTime();
            for (int i = 0; i < 4; i++) {
                // A new connection each time: the delay belongs to the address, not the connection.
                try (WireClient wire = new WireClient(secured.proxy.port())) {
                    assertThat(wrongGuess(wire, "n" + i).getInt32("code").getValue()).isEqualTo(18);
                }
            }
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            // Attempts 2, 3 and 4 each waited 200, 400 and 800 ms after the failure before them: a lower bound only,
            // however loaded the machine is.
            assertThat(tookMs).isGreaterThanOrEqualTo(1400);
            try (WireClient wire = new WireClient(secured.proxy.port())) {
                ScramTestClient right = new ScramTestClient("alice", "alice-pw", "after");
                BsonDocument first = wire.command(new BsonDocument("saslStart", new BsonInt32(1)).append("mechanism", new BsonString("SCRAM-SHA-256"))
                        .append("payload", new BsonBinary(right.clientFirst())).append("$db", new BsonString("admin"))).body();
                wire.command(AuthenticationTest.continueWith(first, right.clientFinal(first.getBinary("payload").getData())));
                wire.command(AuthenticationTest.continueWith(first, new byte[0]));
                assertThat(AuthenticationTest.authenticatedUsers(wire)).isEqualTo(1);
            }
        }
    }
}
