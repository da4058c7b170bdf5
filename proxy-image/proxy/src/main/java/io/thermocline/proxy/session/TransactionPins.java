package io.thermocline.proxy.session;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;

import java.time.Duration;
import java.util.Optional;

/**
 * Multi-statement transactions live on one member: the one that ran the first statement.
 * Every later statement, the commit and the abort go to that member.
 *
 * <p>Bounded, and a pin no statement used for {@code idle} is forgotten: a driver that never commits
 * nor aborts (a crashed client) would otherwise leave it for ever. The default idle time is the
 * servers' session timeout (30 minutes), past which the member has aborted the transaction too.
 */
public final class TransactionPins {

    public static final Duration SESSION_TIMEOUT = Duration.ofMinutes(30);
    public static final long DEFAULT_CAPACITY = 100_000;

    public record Pin(long txnNumber, Tier tier, ServerAddress member) {
    }

    private final Cache<SessionKey, Pin> pins;

    public TransactionPins() {
        this(DEFAULT_CAPACITY, SESSION_TIMEOUT, Ticker.systemTicker());
    }

    public TransactionPins(long capacity, Duration idle, Ticker ticker) {
        this.pins = Caffeine.newBuilder().maximumSize(capacity).expireAfterAccess(idle).ticker(ticker)
                .executor(Runnable::run).build();
    }

    public void pin(SessionKey session, long txnNumber, Tier tier, ServerAddress member) {
        pins.put(session, new Pin(txnNumber, tier, member));
    }

    public Optional<Pin> find(SessionKey session, long txnNumber) {
        Pin p = pins.getIfPresent(session);
        return p != null && p.txnNumber() == txnNumber ? Optional.of(p) : Optional.empty();
    }

    public void release(SessionKey session) {
        pins.invalidate(session);
    }

    public long size() {
        pins.cleanUp();
        return pins.estimatedSize();
    }
}
