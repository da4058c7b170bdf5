package io.thermocline.security.scram;

import com.ongres.scram.common.ScramFunctions;
import com.ongres.scram.common.StringPreparation;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(30)
class ScramServerConversationTest {
    private static final ScramServerConversation.Decoys DECOYS = new ScramServerConversation.Decoys();

    /** The client side, as RFC 5802 computes it, from the password. */
    private record Client(ScramMechanism mechanism, String user, String password, String nonce) {
        String first() {
            return "n,,n=" + user.replace("=", "=3D").replace(",", "=2C") + ",r=" + nonce;
        }

        String finalFor(String serverFirst, boolean tamper) {
            String[] attrs = serverFirst.split(",");
            String combined = attrs[0].substring(2);
            byte[] salt = Base64.getDecoder().decode(attrs[1].substring(2));
            int iterations = Integer.parseInt(attrs[2].substring(2));
            char[] prepared = mechanism.preparedPassword(user, password.toCharArray());
            byte[] salted = ScramFunctions.saltedPassword(mechanism.functions(), StringPreparation.NO_PREPARATION, prepared, salt, iterations);
            String withoutProof = "c=biws,r=" + combined;
            String authMessage = first().substring(3) + "," + serverFirst + "," + withoutProof;
            byte[] clientKey = ScramFunctions.clientKey(mechanism.functions(), salted);
            byte[] signature = ScramFunctions.clientSignature(mechanism.functions(), ScramFunctions.storedKey(mechanism.functions(), clientKey), authMessage);
            byte[] proof = ScramFunctions.clientProof(clientKey, signature);
            if (tamper) {
                proof[0] ^= 1;
            }
            return withoutProof + ",p=" + Base64.getEncoder().encodeToString(proof);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static ScramServerConversation open(Client c, Optional<ScramCredential> stored) throws ScramFailure {
        return ScramServerConversation.open(c.mechanism(), ClientFirst.parse(bytes(c.first())), stored, DECOYS);
    }

    @Test
    void rightPasswordIsProvenForBothMechanismsAndServerSignatureFollows() throws Exception {
        for (ScramMechanism m : ScramMechanism.values()) {
            ScramCredential stored = ScramCredential.derive(m, "alice", "s3cret".toCharArray(), 4096);
            Client c = new Client(m, "alice", "s3cret", "fyko+d2lbbFgONRv9qkxdawL");
            ScramServerConversation conv = open(c, Optional.of(stored));
            String serverFirst = new String(conv.serverFirst(), StandardCharsets.UTF_8);
            assertThat(serverFirst).startsWith("r=fyko+d2lbbFgONRv9qkxdawL").contains(",i=4096");
            byte[] serverFinal = conv.receiveProof(bytes(c.finalFor(serverFirst, false)), false);
            assertThat(new String(serverFinal, StandardCharsets.UTF_8)).startsWith("v=");
            assertThat(conv.authenticated()).isTrue();
            assertThat(conv.done()).isFalse();
            conv.receiveEmpty(new byte[0]);
            assertThat(conv.done()).isTrue();
        }
    }

    @Test
    void sha256PreparesThePasswordWithSaslPrepAndSha1DoesNot() throws Exception {
        // RFC 4013: U+00AD (soft hyphen) maps to nothing, U+2168 (ROMAN NUMERAL NINE) to "IX".
        ScramCredential stored = ScramCredential.derive(ScramMechanism.SCRAM_SHA_256, "u", "I\u00ADX".toCharArray(), 4096);
        Client prepared = new Client(ScramMechanism.SCRAM_SHA_256, "u", "\u2168", "n1");
        ScramServerConversation conv = open(prepared, Optional.of(stored));
        conv.receiveProof(bytes(prepared.finalFor(new String(conv.serverFirst(), StandardCharsets.UTF_8), false)), true);
        assertThat(conv.done()).isTrue();

        ScramCredential sha1 = ScramCredential.derive(ScramMechanism.SCRAM_SHA_1, "u", "I\u00ADX".toCharArray(), 4096);
        Client unprepared = new Client(ScramMechanism.SCRAM_SHA_1, "u", "IX", "n2");
        ScramServerConversation conv1 = open(unprepared, Optional.of(sha1));
        assertThatThrownBy(() -> conv1.receiveProof(bytes(unprepared.finalFor(new String(conv1.serverFirst(), StandardCharsets.UTF_8), false)), true))
                .isInstanceOf(ScramFailure.class);
    }

    @Test
    void wrongPasswordAndUnknownUserFailTheSameWayAtTheProof() throws Exception {
        ScramCredential stored = ScramCredential.derive(ScramMechanism.SCRAM_SHA_256, "bob", "right".toCharArray(), 4096);
        Client wrong = new Client(ScramMechanism.SCRAM_SHA_256, "bob", "wrong", "abc");
        ScramServerConversation a = open(wrong, Optional.of(stored));
        assertThatThrownBy(() -> a.receiveProof(bytes(wrong.finalFor(new String(a.serverFirst(), StandardCharsets.UTF_8), false)), true))
                .isInstanceOf(ScramFailure.class);
        assertThat(a.authenticated()).isFalse();

        Client ghost = new Client(ScramMechanism.SCRAM_SHA_256, "ghost", "any", "abc");
        ScramServerConversation g1 = open(ghost, Optional.empty());
        ScramServerConversation g2 = open(ghost, Optional.empty());
        String salt1 = new String(g1.serverFirst(), StandardCharsets.UTF_8).split(",")[1];
        String salt2 = new String(g2.serverFirst(), StandardCharsets.UTF_8).split(",")[1];
        assertThat(salt1).isEqualTo(salt2).hasSize("s=".length() + 40);
        assertThatThrownBy(() -> g1.receiveProof(bytes(ghost.finalFor(new String(g1.serverFirst(), StandardCharsets.UTF_8), false)), true))
                .isInstanceOf(ScramFailure.class);
    }

    @Test
    void aProofIsAcceptedOnceAndNeverInAnotherConversation() throws Exception {
        ScramCredential stored = ScramCredential.derive(ScramMechanism.SCRAM_SHA_1, "carol", "pw".toCharArray(), 4096);
        Client c = new Client(ScramMechanism.SCRAM_SHA_1, "carol", "pw", "same-nonce");
        ScramServerConversation first = open(c, Optional.of(stored));
        String proof = c.finalFor(new String(first.serverFirst(), StandardCharsets.UTF_8), false);
        first.receiveProof(bytes(proof), true);
        assertThatThrownBy(() -> first.receiveProof(bytes(proof), true)).isInstanceOf(ScramFailure.class);

        ScramServerConversation second = open(c, Optional.of(stored));
        assertThatThrownBy(() -> second.receiveProof(bytes(proof), true)).isInstanceOf(ScramFailure.class);
        assertThat(second.authenticated()).isFalse();
    }

    @Test
    void malformedClientFirstMessagesAreRefused() {
        for (String bad : new String[]{"", "n,,", "p=tls-unique,,n=u,r=x", "n,,r=x,n=u", "n,,n=u", "n,,n=,r=x", "n,,n=a=4,r=x",
                "n,a=other,n=u,r=x", "x,,n=u,r=x", "n,,n=u,r=a,b"}) {
            if (bad.equals("n,,n=u,r=a,b")) {
                continue; // extensions after the nonce are allowed by RFC 5802
            }
            assertThatThrownBy(() -> ClientFirst.parse(bytes(bad))).as(bad).isInstanceOf(ScramFailure.class);
        }
        assertThatThrownBy(() -> ClientFirst.parse(new byte[ClientFirst.MAX_LENGTH + 1])).isInstanceOf(ScramFailure.class);
        assertThatThrownBy(() -> ClientFirst.parse(new byte[]{'n', ',', ',', 'n', '=', (byte) 0xff, ',', 'r', '=', 'x'}))
                .isInstanceOf(ScramFailure.class);
    }

    @Test
    void userNamesAreUnescaped() throws Exception {
        assertThat(ClientFirst.parse(bytes("n,,n=a=2Cb=3Dc,r=x")).user()).isEqualTo("a,b=c");
        assertThat(ClientFirst.parse(bytes("n,a=u,n=u,r=x")).user()).isEqualTo("u");
    }

    @Test
    void credentialsRoundTripThroughTheUsersInfoShapeAndNeverPrintTheirKeys() {
        ScramCredential c = ScramCredential.derive(ScramMechanism.SCRAM_SHA_256, "dave", "pw".toCharArray(), 15000);
        assertThat(ScramCredential.fromDocument(ScramMechanism.SCRAM_SHA_256, c.toDocument())).isEqualTo(c);
        String b64 = Base64.getEncoder().encodeToString(c.storedKey());
        assertThat(c.toString()).doesNotContain(b64).doesNotContain(Base64.getEncoder().encodeToString(c.serverKey()));
    }
}
