package io.thermocline.proxy.server.memory;

import io.thermocline.wire.MessageBudget.Admission;

/**
 * The whole decision over one reservation, pure: a message that keeps its connection within the floor is admitted;
 * past the floor it needs a logged-in connection, room in the connection's budget and room in the process's. When it
 * does not fit but the connection holds other messages, it waits for them (their release may make room); a message
 * that does not fit beside nothing but itself is refused.
 */
public final class MessageAdmission {

    private MessageAdmission() {}

    /**
     * @param connectionHeld what the connection's messages hold now, this one's included
     * @param messageHolds   what this message holds already (what has arrived of its frame)
     * @param processHeld    what every connection's messages hold now
     * @param loggedIn       false for a connection that must log in and has not
     */
    public static Admission decide(
            long connectionHeld,
            long messageHolds,
            long bytes,
            long processHeld,
            MessageMemoryLimits limits,
            boolean loggedIn) {
        if (connectionHeld + bytes <= limits.floor()) {
            return Admission.ADMITTED;
        }
        String refusal;
        if (!loggedIn) {
            refusal = "a connection that has not logged in may hold " + limits.floor() + " bytes of messages";
        } else if (connectionHeld + bytes > limits.perConnection()) {
            refusal = "a connection's messages may hold " + limits.perConnection()
                    + " bytes (proxy.maxBufferedBytesPerConnection)";
        } else if (processHeld + bytes > limits.process()) {
            refusal = "the proxy's client messages hold " + processHeld + " of their " + limits.process()
                    + " bytes (proxy.maxBufferedBytes); retry later or send smaller batches";
        } else {
            return Admission.ADMITTED;
        }
        return connectionHeld > messageHolds ? Admission.DEFERRED : new Admission.Refused(refusal);
    }
}
