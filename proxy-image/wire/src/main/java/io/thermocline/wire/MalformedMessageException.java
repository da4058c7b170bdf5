package io.thermocline.wire;

/**
 * A message that breaks the wire protocol. The connection that sent it cannot be
 * trusted to stay in sync and is closed; {@link #requestId()} lets a server answer
 * with an error first when the header was readable.
 */
public class MalformedMessageException extends RuntimeException {

    private final int requestId;

    public MalformedMessageException(int requestId, String message) {
        super(message);
        this.requestId = requestId;
    }

    public MalformedMessageException(int requestId, String message, Throwable cause) {
        super(message, cause);
        this.requestId = requestId;
    }

    /** The offending message's requestId, or 0 when unknown. */
    public int requestId() {
        return requestId;
    }
}
