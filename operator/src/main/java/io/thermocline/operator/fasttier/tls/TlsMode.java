package io.thermocline.operator.fasttier.tls;

/**
 * mongod's {@code --tlsMode}, in the order the fast tier passes through when TLS is turned on (and back
 * when it is turned off). Between two neighbours every member can reach every other: an
 * {@code allowTLS} member still sends plain text, which a {@code disabled} one accepts; a
 * {@code preferTLS} one sends TLS, which {@code allowTLS} and {@code requireTLS} accept.
 */
public enum TlsMode {
    DISABLED(null, false, true, false),
    ALLOW("allowTLS", true, true, false),
    PREFER("preferTLS", true, true, true),
    REQUIRE("requireTLS", true, false, true);

    private final String flag;
    private final boolean acceptsTls;
    private final boolean acceptsPlain;
    private final boolean sendsTls;

    TlsMode(String flag, boolean acceptsTls, boolean acceptsPlain, boolean sendsTls) {
        this.flag = flag;
        this.acceptsTls = acceptsTls;
        this.acceptsPlain = acceptsPlain;
        this.sendsTls = sendsTls;
    }

    /** The {@code --tlsMode} value; null for a member started without TLS. */
    public String flag() {
        return flag;
    }

    public boolean acceptsTls() {
        return acceptsTls;
    }

    public boolean acceptsPlain() {
        return acceptsPlain;
    }

    /** Whether a member in this mode opens its connections to the other members with TLS. */
    public boolean sendsTls() {
        return sendsTls;
    }

    /** Whether a member in this mode can open a connection to a member in {@code other}. */
    public boolean reaches(TlsMode other) {
        return sendsTls ? other.acceptsTls : other.acceptsPlain;
    }

    /** The next mode on the way to {@code target}: one step at a time. */
    public TlsMode toward(TlsMode target) {
        int step = Integer.compare(target.ordinal(), ordinal());
        return values()[ordinal() + step];
    }

    public static TlsMode ofFlag(String flag) {
        for (TlsMode mode : values()) {
            if (mode.flag != null && mode.flag.equals(flag)) {
                return mode;
            }
        }
        return DISABLED;
    }
}
