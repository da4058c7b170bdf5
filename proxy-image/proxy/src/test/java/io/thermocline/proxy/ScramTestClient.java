package io.thermocline.proxy;

import com.ongres.scram.common.ScramFunctions;
import com.ongres.scram.common.ScramMechanism;
import com.ongres.scram.common.StringPreparation;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** The client side of SCRAM-SHA-256 computed by hand (RFC 5802), to drive the proxy below the driver. */
final class ScramTestClient {
    final String user;
    final String password;
    final String nonce;

    ScramTestClient(String user, String password, String nonce) {
        this.user = user;
        this.password = password;
        this.nonce = nonce;
    }

    byte[] clientFirst() {
        return ("n,,n=" + user + ",r=" + nonce).getBytes(StandardCharsets.UTF_8);
    }

    byte[] clientFinal(byte[] serverFirstBytes) {
        String serverFirst = new String(serverFirstBytes, StandardCharsets.UTF_8);
        String[] attrs = serverFirst.split(",");
        byte[] salt = Base64.getDecoder().decode(attrs[1].substring(2));
        int iterations = Integer.parseInt(attrs[2].substring(2));
        byte[] salted = ScramFunctions.saltedPassword(ScramMechanism.SCRAM_SHA_256, StringPreparation.SASL_PREPARATION,
                password.toCharArray(), salt, iterations);
        String withoutProof = "c=biws,r=" + attrs[0].substring(2);
        String authMessage = "n=" + user + ",r=" + nonce + "," + serverFirst + "," + withoutProof;
        byte[] clientKey = ScramFunctions.clientKey(ScramMechanism.SCRAM_SHA_256, salted);
        byte[] signature = ScramFunctions.clientSignature(ScramMechanism.SCRAM_SHA_256,
                ScramFunctions.storedKey(ScramMechanism.SCRAM_SHA_256, clientKey), authMessage);
        return (withoutProof + ",p=" + Base64.getEncoder().encodeToString(ScramFunctions.clientProof(clientKey, signature)))
                .getBytes(StandardCharsets.UTF_8);
    }
}
