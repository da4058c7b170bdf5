package io.thermocline.operator.fasttier;

/**
 * The shell commands of the mongod container's probes and preStop hook. They use mongosh, or
 * the legacy mongo shell of images before 6.0, and {@code isMaster}, which every version from
 * 4.4 to 8.0 answers without credentials.
 */
final class MemberProbes {

    /** Startup budget (x 10 s): a WiredTiger recovery after a crash may take this long before mongod listens. */
    static final int STARTUP_FAILURES = 360;
    /** Room for the preStop step-down (up to 15 s catch-up) and a clean shutdown. */
    static final long TERMINATION_GRACE_SECONDS = 60L;

    private static final String SHELL = "if command -v mongosh >/dev/null 2>&1; then S=mongosh; else S=mongo; fi; ";

    /** Exit 0 only for PRIMARY or SECONDARY: a member in STARTUP2, RECOVERING or without config is not ready. */
    static final String READY = SHELL + "$S --quiet --port 27017 --eval "
            + "'var h = db.isMaster(); if (!(h.ismaster || h.secondary)) { quit(1) }'";

    /** A primary hands over before it stops, so writes pause for an election of seconds, not a timeout. */
    static final String STEP_DOWN = SHELL + "$S --quiet --port 27017 -u \"$MONGO_INITDB_ROOT_USERNAME\""
            + " -p \"$MONGO_INITDB_ROOT_PASSWORD\" --authenticationDatabase admin --eval "
            + "'if (db.isMaster().ismaster) { try { db.adminCommand({replSetStepDown: 60, secondaryCatchUpPeriodSecs: 15}) }"
            + " catch (e) { print(e) } }' || true";

    /** With {@code requireTLS} the shell connects over TLS to localhost (a name the certificate carries). */
    private static final String TLS = " --tls --tlsCAFile " + FastTierStatefulSetDependent.TLS_DIR + "/ca.crt --host localhost";

    static String ready(boolean tls) {
        return tls ? READY.replace("--quiet --port", "--quiet" + TLS + " --port") : READY;
    }

    static String stepDown(boolean tls) {
        return tls ? STEP_DOWN.replace("--quiet --port", "--quiet" + TLS + " --port") : STEP_DOWN;
    }

    private MemberProbes() {
    }
}
