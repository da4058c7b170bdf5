package io.thermocline.proxy.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Exactly-once for retried writes: every operation of the workload increments one counter and pushes its
 * own id in the same statement ({@code $inc: {n: 1}, $push: {ops: id}}), so the final documents show how
 * often each ran. An operation may run at most once, an acknowledged one exactly once with the reply one
 * database gives (it matched and changed the counter); one that failed (an error after the driver's retry)
 * may have run once or not at all.
 */
final class ExactlyOnceChecker {

    enum Kind {
        /** An operation's id appears more than once: it ran twice. */
        DUPLICATE,
        /** An acknowledged operation's id is missing. */
        LOST,
        /** An acknowledged operation's reply does not say it matched and changed the counter once. */
        WRONG_REPLY,
        /** A counter's {@code n} differs from the number of ids it holds: a statement applied in part. */
        TORN
    }

    /** One operation: its id, its counter, whether the client got a reply, and what the reply said. */
    record Attempt(String id, String counter, boolean acknowledged, long matched, long modified) {
        static Attempt acknowledged(String id, String counter, long matched, long modified) {
            return new Attempt(id, counter, true, matched, modified);
        }

        static Attempt failed(String id, String counter) {
            return new Attempt(id, counter, false, 0, 0);
        }
    }

    /** A counter's final state. */
    record Counter(long n, List<String> ops) {
    }

    record Anomaly(Kind kind, String id, String detail) {
    }

    private ExactlyOnceChecker() {
    }

    static List<Anomaly> check(List<Attempt> attempts, Map<String, Counter> finals) {
        List<Anomaly> anomalies = new ArrayList<>();
        Map<String, Integer> runs = new HashMap<>();
        finals.forEach((name, counter) -> {
            counter.ops().forEach(id -> runs.merge(id, 1, Integer::sum));
            if (counter.n() != counter.ops().size()) {
                anomalies.add(new Anomaly(Kind.TORN, name, "n " + counter.n() + " but " + counter.ops().size() + " ids"));
            }
        });
        for (Attempt a : attempts) {
            int ran = runs.getOrDefault(a.id(), 0);
            if (ran > 1) {
                anomalies.add(new Anomaly(Kind.DUPLICATE, a.id(), "ran " + ran + " times" + (a.acknowledged() ? "" : " (failed for the client)")));
            }
            if (a.acknowledged() && ran == 0) {
                anomalies.add(new Anomaly(Kind.LOST, a.id(), "acknowledged, not in " + a.counter()));
            }
            if (a.acknowledged() && (a.matched() != 1 || a.modified() != 1)) {
                anomalies.add(new Anomaly(Kind.WRONG_REPLY, a.id(), "matched " + a.matched() + ", modified " + a.modified()));
            }
        }
        return anomalies;
    }
}
