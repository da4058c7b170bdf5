package io.thermocline.security.scram;

/**
 * A SCRAM conversation that cannot go on. The reason is for the server's own log; a client
 * is only ever told "Authentication failed." so it cannot learn which part was wrong.
 */
public final class ScramFailure extends Exception {
    public ScramFailure(String reason) {
        super(reason, null, false, false);
    }
}
