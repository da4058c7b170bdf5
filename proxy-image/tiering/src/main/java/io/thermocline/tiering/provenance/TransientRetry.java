package io.thermocline.tiering.provenance;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Back-off between attempts of a transaction that hit a transient error (a write conflict with
 * another transaction on the same document). Retrying at once mostly meets the same conflict
 * again while the other transaction still holds the document, as the drivers' own
 * {@code withTransaction} also learned; a growing, jittered pause lets it commit first.
 */
final class TransientRetry {

    static final int MAX_ATTEMPTS = 30;

    private TransientRetry() {
    }

    static void pause(int attempt) {
        long ceiling = Math.min(250, 5L << Math.min(attempt, 6));
        try {
            Thread.sleep(ThreadLocalRandom.current().nextLong(1, ceiling + 1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while retrying a transaction", e);
        }
    }
}
