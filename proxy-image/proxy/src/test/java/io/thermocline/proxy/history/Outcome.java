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

    record Indeterminate(String error) implements Outcome {
    }
}
