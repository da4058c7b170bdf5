package io.thermocline.security.scram;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(30)
class ScramClientConversationTest {
    private static final ScramServerConversation.Decoys DECOYS = new ScramServerConversation.Decoys();

    @Test
    void clientAndServerAgreeForBothMechanismsAndTheClientChecksTheServer() throws Exception {
        for (ScramMechanism m : ScramMechanism.values()) {
            ScramCredential stored = ScramCredential.derive(m, "proxy", "pw".toCharArray(), 4096);
            ScramClientConversation client = new ScramClientConversation(m, "proxy", "pw".toCharArray());
            ScramServerConversation server = ScramServerConversation.open(m, ClientFirst.parse(client.clientFirst()), Optional.of(stored), DECOYS);
            byte[] serverFinal = server.receiveProof(client.clientFinal(server.serverFirst()), true);
            client.verifyServerFinal(serverFinal);
            assertThat(server.done()).isTrue();
        }
    }

    @Test
    void aServerThatDoesNotKnowThePasswordCannotPassForTheTier() throws Exception {
        ScramMechanism m = ScramMechanism.SCRAM_SHA_256;
        ScramClientConversation client = new ScramClientConversation(m, "proxy", "pw".toCharArray());
        // An impostor that took the client's proof anyway and answers with a signature of its own.
        ScramCredential impostor = ScramCredential.derive(m, "proxy", "other".toCharArray(), 4096);
        ScramServerConversation server = ScramServerConversation.open(m, ClientFirst.parse(client.clientFirst()), Optional.of(impostor), DECOYS);
        client.clientFinal(server.serverFirst());
        assertThatThrownBy(() -> client.verifyServerFinal("v=AAAA".getBytes(StandardCharsets.UTF_8))).isInstanceOf(ScramFailure.class);
        assertThatThrownBy(() -> new ScramClientConversation(m, "proxy", "pw".toCharArray())
                .clientFinal("r=not-our-nonce,s=AAAA,i=4096".getBytes(StandardCharsets.UTF_8))).isInstanceOf(ScramFailure.class);
        ScramClientConversation weak = new ScramClientConversation(m, "proxy", "pw".toCharArray());
        String nonce = new String(weak.clientFirst(), StandardCharsets.UTF_8).split("r=")[1];
        assertThatThrownBy(() -> weak.clientFinal(("r=" + nonce + "x,s=AAAA,i=1").getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(ScramFailure.class);
    }
}
