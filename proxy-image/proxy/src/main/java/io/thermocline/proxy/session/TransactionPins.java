package io.thermocline.proxy.session;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.tiering.cache.ExpiringCache;

import java.time.Duration;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Multi-statement transactions live on one member: the one that ran the first statement.
 * Every later statement, the commit and the abort go to that member.
 *
 * <p>Bounded, and a pin no statement used for {@code idle} is forgotten: a driver that never commits
 * nor aborts (a crashed client) would otherwise leave it for ever. The default idle time is the
 * servers' session timeout (30 minutes), past which the member has aborted the transaction too.
 */
public final class TransactionPins {

    public static final int DEFAULT_CAPACITY = 100_000;

    public record Pin(long txnNumber, Tier tier, ServerAddress member) {
    }

    private final ExpiringCache<SessionKey, Pin> pins;

    public TransactionPins() {
        this(DEFAULT_CAPACITY, SessionKey.TIMEOUT, System::nanoTime);
    }

    public TransactionPins(int capacity, Duration idle, LongSupplier nanoTime) {
        this.pins = new ExpiringCache<>(capacity, idle, nanoTime);
    }

    public void pin(SessionKey session, long txnNumber, Tier tier, ServerAddress member) {
        pins.put(session, new Pin(txnNumber, tier, member));
    }

    public Optional<Pin> find(SessionKey session, long txnNumber) {
        Pin p = pins.get(session);
        return p != null && p.txnNumber() == txnNumber ? Optional.of(p) : Optional.empty();
    }

    public void release(SessionKey session) {
        pins.remove(session);
    }

    public long size() {
        return pins.size();
    }
}
