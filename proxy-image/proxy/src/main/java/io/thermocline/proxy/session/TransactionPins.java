package io.thermocline.proxy.session;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Multi-statement transactions live on one member: the one that ran the first statement.
 * Every later statement, the commit and the abort go to that member.
 */
public final class TransactionPins {

    public record Pin(long txnNumber, Tier tier, ServerAddress member) {
    }

    private final Map<SessionKey, Pin> pins = new ConcurrentHashMap<>();

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

    public int size() {
        return pins.size();
    }
}
