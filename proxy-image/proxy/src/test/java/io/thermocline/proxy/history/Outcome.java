package io.thermocline.proxy.history;

import java.util.List;
import java.util.Set;

/** What came back. An error or a timeout is {@link Indeterminate}: the write may or may not have happened. */
sealed interface Outcome {

    /** A write's acknowledgement: {@code n} as the server reported it, and the batch indexes refused with E11000. */
    record Written(long n, Set<Integer> duplicateKeys) implements Outcome {
        static Written of(long n) {
            return new Written(n, Set.of());
        }
    }

    record Found(List<Doc> docs) implements Outcome {
    }

    record Counted(long count) implements Outcome {
    }

    /**
     * No answer, or an error: the operation may or may not have taken effect. {@code transientError}
     * is true for what a healthy replica set also returns now and then (timeouts, network errors,
     * elections, retryable codes); anything else is an error a client should never see.
     */
    record Indeterminate(String error, boolean transientError) implements Outcome {
        static Indeterminate timeout(String error) {
            return new Indeterminate(error, true);
        }
    }
}
