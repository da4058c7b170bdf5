package io.thermocline.proxy.server.memory;

import io.thermocline.wire.MessageBudget;
import java.util.function.BooleanSupplier;

/**
 * What one client connection's messages hold of the process's {@link MessageMemory}. Confined to the connection's event
 * loop. Closing gives back whatever is still held (a frame half received, messages queued or in flight), so no path, a
 * failure or a reset included, can keep budget; a release after that is a no-op.
 */
public final class ConnectionMemory implements MessageBudget {

    private final MessageMemory process;
    private final BooleanSupplier loggedIn;
    private long held;
    private boolean closed;

    ConnectionMemory(MessageMemory process, BooleanSupplier loggedIn) {
        this.process = process;
        this.loggedIn = loggedIn;
    }

    @Override
    public Admission reserve(long bytes, long messageHolds) {
        if (closed) {
            return new Admission.Refused("the connection is closed");
        }
        Admission admission = process.reserve(held, messageHolds, bytes, loggedIn.getAsBoolean());
        if (admission instanceof Admission.Admitted) {
            held += bytes;
        }
        return admission;
    }

    @Override
    public void release(long bytes) {
        long n = Math.min(bytes, held);
        if (closed || n <= 0) {
            return;
        }
        held -= n;
        process.release(n);
    }

    /** What this connection's messages hold now. */
    public long held() {
        return held;
    }

    public void close() {
        if (!closed) {
            closed = true;
            process.release(held);
            held = 0;
        }
    }
}
