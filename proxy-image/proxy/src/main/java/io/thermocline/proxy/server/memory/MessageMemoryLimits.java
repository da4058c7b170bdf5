package io.thermocline.proxy.server.memory;

import java.time.Duration;

/**
 * How much memory client messages may hold, framed and inflated, from their first byte until they are answered.
 *
 * @param perConnection what one connection's messages may hold together ({@code proxy.maxBufferedBytesPerConnection})
 * @param process       what all connections' messages may hold together ({@code proxy.maxBufferedBytes})
 * @param floor         what any connection may hold whatever the process holds: one message of a connection that has
 *                      not logged in, framed and inflated, so a process budget spent by others never locks out small
 *                      requests (the handshake, a login, the commands of a well-behaved client)
 * @param stallTimeout  a message begun must keep arriving: a connection that sends none of the rest for this long while
 *                      the proxy reads is closed, so a frame left half sent cannot hold budget for ever
 */
public record MessageMemoryLimits(long perConnection, long process, long floor, Duration stallTimeout) {

    /** How long a begun message may go without a byte, unless told otherwise. */
    public static final Duration DEFAULT_STALL_TIMEOUT = Duration.ofSeconds(30);

    public MessageMemoryLimits {
        if (floor < 0 || perConnection < floor || process < perConnection) {
            throw new IllegalArgumentException(
                    "need 0 <= floor <= perConnection <= process: " + floor + ", " + perConnection + ", " + process);
        }
        if (stallTimeout.isNegative() || stallTimeout.isZero()) {
            throw new IllegalArgumentException("stallTimeout must be positive: " + stallTimeout);
        }
    }

    public MessageMemoryLimits withStallTimeout(Duration timeout) {
        return new MessageMemoryLimits(perConnection, process, floor, timeout);
    }
}
