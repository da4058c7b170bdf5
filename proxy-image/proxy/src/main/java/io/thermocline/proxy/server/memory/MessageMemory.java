package io.thermocline.proxy.server.memory;

import io.thermocline.wire.MessageBudget.Admission;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;

/** The process's memory for client messages, shared by its connections' {@link ConnectionMemory}. */
public final class MessageMemory {

    private final MessageMemoryLimits limits;
    private final AtomicLong held = new AtomicLong();
    private final LongAdder refused = new LongAdder();

    public MessageMemory(MessageMemoryLimits limits) {
        this.limits = limits;
    }

    public MessageMemoryLimits limits() {
        return limits;
    }

    /** What every connection's messages hold now. */
    public long held() {
        return held.get();
    }

    /** Messages refused so far. */
    public long refused() {
        return refused.sum();
    }

    /** A connection's share; the connection's event loop uses it, and closes it when the connection closes. */
    public ConnectionMemory open(BooleanSupplier loggedIn) {
        return new ConnectionMemory(this, loggedIn);
    }

    Admission reserve(long connectionHeld, long messageHolds, long bytes, boolean loggedIn) {
        while (true) {
            long now = held.get();
            Admission admission = MessageAdmission.decide(connectionHeld, messageHolds, bytes, now, limits, loggedIn);
            if (!(admission instanceof Admission.Admitted)) {
                if (admission instanceof Admission.Refused) {
                    refused.increment();
                }
                return admission;
            }
            if (held.compareAndSet(now, now + bytes)) {
                return admission;
            }
        }
    }

    void release(long bytes) {
        held.addAndGet(-bytes);
    }
}
