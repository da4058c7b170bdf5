package io.thermocline.security.authentication;

import java.net.InetAddress;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A growing delay on failed logins per user and source address, which mongod does not have: after n
 * failures in a row at one user from one address, each new attempt at that user from that address
 * starts no earlier than {@code base * 2^(n-1)} (at most {@code max}) after the previous one, however
 * many connections it opens. A success, or {@code forgetAfter} without failures, clears only that user
 * at that address: logging in as oneself does not clear the failures at another user (which would let
 * guesses at {@code root} go at full speed between one's own logins), and one client's failures at
 * {@code root} do not delay another user's login from the same address (a NAT, a shared host).
 */
public final class LoginThrottle {
    private record Strikes(int failures, long nextAllowedNanos, long lastFailureNanos) {
    }

    /** Whose attempts are counted together: one user name (as the client named it, {@code user@db}) from one address. */
    private record Source(InetAddress address, String user) {
    }

    private static final int MAX_TRACKED = 10_000;

    private final long baseNanos;
    private final long maxNanos;
    private final long forgetNanos;
    private final LongSupplier clock;
    private final Map<Source, Strikes> strikes = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Source, Strikes> eldest) {
            return size() > MAX_TRACKED;
        }
    };

    public LoginThrottle(Duration base, Duration max, Duration forgetAfter) {
        this(base, max, forgetAfter, System::nanoTime);
    }

    LoginThrottle(Duration base, Duration max, Duration forgetAfter, LongSupplier clock) {
        this.baseNanos = base.toNanos();
        this.maxNanos = max.toNanos();
        this.forgetNanos = forgetAfter.toNanos();
        this.clock = clock;
    }

    public static LoginThrottle off() {
        return new LoginThrottle(Duration.ZERO, Duration.ZERO, Duration.ZERO);
    }

    /**
     * Reserves the next attempt at {@code user} ({@code user@db}) from {@code address}: how long it must wait before it
     * is looked at. Concurrent attempts of one user and address are spaced by the current delay each.
     */
    public synchronized Duration admit(InetAddress address, String user) {
        long now = clock.getAsLong();
        Source key = new Source(address, user);
        Strikes s = strikes.get(key);
        if (s == null || s.failures == 0 || baseNanos == 0) {
            return Duration.ZERO;
        }
        if (now - s.lastFailureNanos > forgetNanos) {
            strikes.remove(key);
            return Duration.ZERO;
        }
        long start = Math.max(now, s.nextAllowedNanos);
        strikes.put(key, new Strikes(s.failures, start + delay(s.failures), s.lastFailureNanos));
        return Duration.ofNanos(start - now);
    }

    public synchronized void failed(InetAddress address, String user) {
        long now = clock.getAsLong();
        Source key = new Source(address, user);
        Strikes s = strikes.get(key);
        int failures = s == null || now - s.lastFailureNanos > forgetNanos ? 1 : s.failures + 1;
        long next = Math.max(now + delay(failures), s == null ? 0 : s.nextAllowedNanos);
        strikes.put(key, new Strikes(failures, next, now));
    }

    public synchronized void succeeded(InetAddress address, String user) {
        strikes.remove(new Source(address, user));
    }

    public synchronized int failures(InetAddress address, String user) {
        Strikes s = strikes.get(new Source(address, user));
        return s == null ? 0 : s.failures;
    }

    private long delay(int failures) {
        if (baseNanos == 0) {
            return 0;
        }
        int shift = Math.min(failures - 1, 30);
        long d = baseNanos << shift;
        return d <= 0 || d > maxNanos ? maxNanos : d;
    }
}
