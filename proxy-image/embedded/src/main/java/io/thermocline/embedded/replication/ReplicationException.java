package io.thermocline.embedded.replication;

/** A replica-set level refusal with the server's error code and name. */
public class ReplicationException extends RuntimeException {
    private final int code;
    private final String codeName;

    public ReplicationException(int code, String codeName, String message) {
        super(message);
        this.code = code;
        this.codeName = codeName;
    }

    public int code() {
        return code;
    }

    public String codeName() {
        return codeName;
    }
}
