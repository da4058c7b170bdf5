package io.thermocline.embedded.replication;

/** A member's replica-set state, with the server's numeric code and name (replSetGetStatus). */
public enum MemberRole {
    PRIMARY(1, "PRIMARY"), SECONDARY(2, "SECONDARY"), DOWN(8, "(not reachable/healthy)");

    private final int code;
    private final String label;

    MemberRole(int code, String label) {
        this.code = code;
        this.label = label;
    }

    public int code() {
        return code;
    }

    public String label() {
        return label;
    }
}
