package io.thermocline.proxy.causal;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;

/**
 * The archive's present, for a read a secondary may serve: an archive optime at or after every write the
 * archive's primary applied before the call (the {@code operationTime} of a {@code ping} on the primary, its
 * last applied optime). Taken after the read barrier passed, it covers every mirrored write the read must
 * see, so a member that has applied it holds them too. Readings are shared as {@link FastTierClock} shares
 * probes: one ping at a time, and a caller never gets one that started before it arrived.
 */
public final class ArchivePresent {

    private final FastTierClock shared;
    private final Duration timeout;
    private final AtomicLong pings = new AtomicLong();

    /** {@code ping} blocks until the archive's primary answered and returns the reply's operationTime (null: none). */
    public ArchivePresent(Supplier<BsonTimestamp> ping, Executor executor, Duration timeout) {
        this.shared = new FastTierClock(() -> {
            pings.incrementAndGet();
            return ping.get();
        }, executor);
        this.timeout = timeout;
    }

    /** The pings sent to the archive's primary so far (for the proxy's metrics). */
    public long pings() {
        return pings.get();
    }

    /** The archive's present, or empty when the primary did not answer in time (the read then stays on the primary). */
    public Optional<BsonTimestamp> now() throws InterruptedException {
        try {
            return Optional.ofNullable(shared.now().get(timeout.toNanos(), TimeUnit.NANOSECONDS));
        } catch (ExecutionException | TimeoutException e) {
            return Optional.empty();
        }
    }
}
