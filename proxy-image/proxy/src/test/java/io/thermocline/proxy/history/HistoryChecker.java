package io.thermocline.proxy.history;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * Checks a history of single-document writes with unique values against what one replica set
 * guarantees. Each key is a register whose versions are the writes on it (a delete writes
 * "absent"); a read of a key is allowed to return a version when
 * <ul>
 *   <li>its write was invoked before the read completed (no value from the future), and</li>
 *   <li>no write the read must reflect completed strictly before the version's write was invoked
 *       (that version was already overwritten).</li>
 * </ul>
 * Which writes a read must reflect is the consistency mode: in {@link Mode#LINEARIZABLE} every write
 * acknowledged before the read was invoked; in {@link Mode#SESSION} only, for a read in an explicit
 * session, the session's own acknowledged writes (read-your-writes) and the writes its earlier reads
 * saw (monotonic reads). The final state, read after a full sync, must reflect every acknowledged
 * write in both modes (no acknowledged write lost, no acknowledged delete undone), and every {@code n}
 * a write reports must be one the database could report at some point between its invocation and
 * its completion. Indeterminate writes may take effect at any time after their invocation, or never.
 */
final class HistoryChecker {

    enum Mode { LINEARIZABLE, SESSION }

    enum AnomalyType {
        /** The final state misses an acknowledged insert or update (or holds an older version). */
        LOST_WRITE,
        /** The final state holds a document an acknowledged delete removed, or a later write found it. */
        DELETE_UNDONE,
        /** A read returned a version older than a write acknowledged before the read was invoked. */
        STALE_READ,
        /** A read in a session missed a write the same session had acknowledged. */
        READ_YOUR_WRITES,
        /** A read in a session returned a version older than one an earlier read of the session saw. */
        MONOTONIC_READS,
        /** A read returned a value whose write was invoked after the read completed. */
        FUTURE_READ,
        /** A read returned a value no write wrote (or a write that was refused, or never sent). */
        UNKNOWN_VALUE,
        /** A read returned a known value with other fields than its write gave it, or a document twice, or one its filter excludes. */
        WRONG_RESULT,
        /** A count outside what any interleaving allows. */
        WRONG_COUNT,
        /** A write reported an {@code n} one database would not report. */
        WRONG_N,
        /** An operation failed with an error a healthy replica set does not return (not a timeout, network error or retryable code). */
        UNEXPECTED_ERROR
    }

    /** One violation, with the operations that show it (the offending op first). */
    record Anomaly(AnomalyType type, String message, int key, List<Op> evidence) {
    }

    /** A version of one key: a write that may have happened (null doc = the key is absent). */
    private record Version(Op op, int key, Doc doc, long invokedAt, long completedAt) {
        boolean present() {
            return doc != null;
        }

        boolean isDelete() {
            return op != null && op.call() instanceof Call.Delete;
        }
    }

    private static final long NEVER = Long.MAX_VALUE;
    private static final long BEFORE_HISTORY = Long.MIN_VALUE;

    private final Mode mode;
    private final List<Op> history;
    private final Map<Integer, List<Version>> versions = new HashMap<>();
    private final Map<Long, Version> byValue = new HashMap<>();
    private final List<Anomaly> anomalies = new ArrayList<>();

    private HistoryChecker(List<Op> history, Mode mode) {
        this.history = history.stream().sorted(Comparator.comparingLong(Op::invokedAt)).toList();
        this.mode = mode;
    }

    /**
     * @param finalStates per source (e.g. "archive", "proxy"), every document it holds, read after
     *                    every operation completed, the workers stopped and the feeder caught up
     */
    static List<Anomaly> check(List<Op> history, Mode mode, Map<String, List<Doc>> finalStates) {
        HistoryChecker checker = new HistoryChecker(history, mode);
        checker.collectVersions();
        checker.checkErrors();
        checker.checkWrites();
        checker.checkReads();
        finalStates.forEach(checker::checkFinal);
        return List.copyOf(checker.anomalies);
    }

    // ---- versions ----------------------------------------------------------------------------

    private void collectVersions() {
        for (Op op : history) {
            long completed = op.acknowledged() ? op.completedAt() : NEVER;
            // an update or delete that matched nothing wrote nothing
            boolean matched = !(op.outcome() instanceof Outcome.Written w) || w.n() > 0;
            if (op.call() instanceof Call.Insert insert) {
                for (int i = 0; i < insert.docs().size(); i++) {
                    if (mayHaveInserted(op, insert, i)) {
                        add(new Version(op, insert.docs().get(i).key(), insert.docs().get(i), op.invokedAt(), completed));
                    }
                }
            } else if (op.call() instanceof Call.Update update && matched) {
                add(new Version(op, update.doc().key(), update.doc(), op.invokedAt(), completed));
            } else if (op.call() instanceof Call.Delete delete && matched) {
                add(new Version(op, delete.key(), null, op.invokedAt(), completed));
            }
        }
    }

    /** One database: unordered inserts all but the refused; ordered stops at the first refusal. */
    private static boolean mayHaveInserted(Op op, Call.Insert insert, int index) {
        if (!(op.outcome() instanceof Outcome.Written written)) {
            return true;
        }
        if (written.duplicateKeys().contains(index)) {
            return false;
        }
        return !insert.ordered() || written.duplicateKeys().stream().noneMatch(refused -> refused < index);
    }

    private static int expectedInserted(Call.Insert insert, Outcome.Written written) {
        int inserted = 0;
        for (int i = 0; i < insert.docs().size(); i++) {
            if (written.duplicateKeys().contains(i)) {
                if (insert.ordered()) {
                    break;
                }
            } else {
                inserted++;
            }
        }
        return inserted;
    }

    private void add(Version version) {
        versions.computeIfAbsent(version.key(), k -> initial(k)).add(version);
        if (version.present()) {
            byValue.put(version.doc().value(), version);
        }
    }

    private static List<Version> initial(int key) {
        List<Version> list = new ArrayList<>();
        list.add(new Version(null, key, null, BEFORE_HISTORY, BEFORE_HISTORY));
        return list;
    }

    private List<Version> versionsOf(int key) {
        return versions.computeIfAbsent(key, HistoryChecker::initial);
    }

    private Set<Integer> keys() {
        return new TreeSet<>(versions.keySet());
    }

    private void checkErrors() {
        for (Op op : history) {
            if (op.outcome() instanceof Outcome.Indeterminate failed && !failed.transientError()) {
                report(AnomalyType.UNEXPECTED_ERROR, failed.error(), -1, op);
            }
        }
    }

    // ---- writes: n as one database reports it --------------------------------------------------

    private void checkWrites() {
        for (Op op : history) {
            if (!(op.outcome() instanceof Outcome.Written written)) {
                continue;
            }
            if (op.call() instanceof Call.Insert insert) {
                    int expected = expectedInserted(insert, written);
                    if (written.n() != expected) {
                        report(AnomalyType.WRONG_N, "insert reported n=" + written.n() + " but " + expected
                                + " of its documents were not refused", insert.docs().get(0).key(), op);
                    }
                    for (int i = 0; i < insert.docs().size(); i++) {
                        int key = insert.docs().get(i).key();
                        if (written.duplicateKeys().contains(i)) {
                            judgeWrite(op, key, true, "refused with E11000");
                        } else if (mayHaveInserted(op, insert, i)) {
                            judgeWrite(op, key, false, "inserted");
                        }
                    }
            } else if (op.call() instanceof Call.Update update) {
                judgeCount(op, update.doc().key(), written.n(), "update");
            } else if (op.call() instanceof Call.Delete delete) {
                judgeCount(op, delete.key(), written.n(), "delete");
            }
        }
    }

    private void judgeCount(Op op, int key, long n, String what) {
        if (n != 0 && n != 1) {
            report(AnomalyType.WRONG_N, what + " by _id reported n=" + n, key, op);
            return;
        }
        judgeWrite(op, key, n == 1, what + " reported n=" + n);
    }

    /** The key was present (or absent) at some point while the write ran, given every write acknowledged before it. */
    private void judgeWrite(Op op, int key, boolean present, String what) {
        Predicate<Version> consistent = v -> v.op() != op && v.present() == present;
        List<Version> mustReflect = acknowledgedBefore(key, op.invokedAt());
        if (allowed(key, consistent, op.completedAt(), mustReflect)) {
            return;
        }
        Version delete = present ? mustReflect.stream().filter(Version::isDelete).reduce((a, b) -> b).orElse(null) : null;
        if (delete != null) {
            report(AnomalyType.DELETE_UNDONE, what + ": it found the document an acknowledged delete had removed", key, op,
                    List.of(delete.op()));
        } else {
            report(AnomalyType.WRONG_N, what + " but the key was " + (present ? "absent" : "present")
                    + " throughout, as far as the acknowledged writes show", key, op);
        }
    }

    // ---- reads ---------------------------------------------------------------------------------

    private void checkReads() {
        Map<Integer, Map<Integer, List<Version>>> seenBySession = new HashMap<>();
        for (Op op : history) {
            if (op.call().isWrite() || !op.acknowledged()) {
                continue;
            }
            Map<Integer, List<Version>> seen = op.inSession()
                    ? seenBySession.computeIfAbsent(op.session(), s -> new HashMap<>()) : new HashMap<>();
            if (op.call() instanceof Call.PointRead read) {
                List<Doc> docs = ((Outcome.Found) op.outcome()).docs();
                Map<Integer, Doc> returned = returned(op, docs, doc -> doc.key() == read.key());
                judgeRead(op, read.key(), returned.get(read.key()), new Filter.All(), seen);
            } else if (op.call() instanceof Call.Scan scan) {
                Map<Integer, Doc> returned = returned(op, ((Outcome.Found) op.outcome()).docs(), scan.filter()::matches);
                for (int key : union(keys(), returned.keySet())) {
                    judgeRead(op, key, returned.get(key), scan.filter(), seen);
                }
            } else if (op.call() instanceof Call.Count count) {
                judgeCount(op, count.filter(), ((Outcome.Counted) op.outcome()).count(), seen);
            }
        }
    }

    /** The documents a read returned, by key; a duplicate or a document the filter excludes is reported. */
    private Map<Integer, Doc> returned(Op op, List<Doc> docs, Predicate<Doc> filter) {
        Map<Integer, Doc> byKey = new LinkedHashMap<>();
        for (Doc doc : docs) {
            if (byKey.put(doc.key(), doc) != null) {
                report(AnomalyType.WRONG_RESULT, "returned key " + doc.key() + " twice", doc.key(), op);
            }
            if (!filter.test(doc)) {
                report(AnomalyType.WRONG_RESULT, "returned " + doc + ", which its filter excludes", doc.key(), op);
            }
        }
        return byKey;
    }

    private static Set<Integer> union(Set<Integer> a, Set<Integer> b) {
        Set<Integer> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }

    /** A read saw {@code doc} of the key (null: the key absent, or not matching the filter). */
    private void judgeRead(Op op, int key, Doc doc, Filter filter, Map<Integer, List<Version>> seen) {
        Predicate<Version> consistent = consistentWith(op, key, doc, filter);
        if (consistent == null) {
            return;
        }
        List<Version> mustReflect = mustReflect(op, key, seen);
        List<Version> candidates = versionsOf(key).stream().filter(consistent).toList();
        if (candidates.stream().noneMatch(v -> v.invokedAt() < op.completedAt())) {
            report(AnomalyType.FUTURE_READ, "saw " + describe(doc) + ", written only after the read completed", key,
                    op, candidates.stream().map(Version::op).toList());
            return;
        }
        if (!allowed(key, consistent, op.completedAt(), mustReflect)) {
            Supersession why = supersession(candidates, mustReflect, op.completedAt());
            report(staleType(op, why.by()), "saw " + describe(doc) + " but " + why.by().op().call()
                    + " was acknowledged before the read was invoked", key, op, why.evidence());
            return;
        }
        if (op.inSession() && doc != null) {
            seen.computeIfAbsent(key, k -> new ArrayList<>()).add(byValue.get(doc.value()));
        }
    }

    private AnomalyType staleType(Op op, Version by) {
        if (mode == Mode.LINEARIZABLE) {
            return AnomalyType.STALE_READ;
        }
        // the session's own write, or a write an earlier read of the session saw
        return by.op().session() == op.session() ? AnomalyType.READ_YOUR_WRITES : AnomalyType.MONOTONIC_READS;
    }

    /**
     * What an observation can be. Null when it names no write at all (reported here): an unknown value,
     * or a value with other fields than its write set.
     */
    private Predicate<Version> consistentWith(Op op, int key, Doc doc, Filter filter) {
        if (doc == null) {
            return v -> !v.present() || !filter.matches(v.doc());
        }
        Version written = byValue.get(doc.value());
        if (written == null || written.key() != key) {
            report(AnomalyType.UNKNOWN_VALUE, "saw " + doc + ", a value no acknowledged or pending write gave this key", key, op);
            return null;
        }
        if (!written.doc().equals(doc)) {
            report(AnomalyType.WRONG_RESULT, "saw " + doc + " but its write set " + written.doc(), key, op, List.of(written.op()));
            return null;
        }
        return v -> v == written;
    }

    private List<Version> mustReflect(Op read, int key, Map<Integer, List<Version>> seen) {
        if (mode == Mode.LINEARIZABLE) {
            return acknowledgedBefore(key, read.invokedAt());
        }
        if (!read.inSession()) {
            return List.of();
        }
        List<Version> must = new ArrayList<>(seen.getOrDefault(key, List.of()));
        for (Version v : versionsOf(key)) {
            if (v.op() != null && v.op().session() == read.session() && v.completedAt() < read.invokedAt()) {
                must.add(v);
            }
        }
        return must;
    }

    private List<Version> acknowledgedBefore(int key, long time) {
        return versionsOf(key).stream().filter(v -> v.completedAt() < time).toList();
    }

    /** Some version matching the observation was written before {@code readCompleted} and not overwritten by one the read must reflect. */
    private boolean allowed(int key, Predicate<Version> consistent, long readCompleted, List<Version> mustReflect) {
        for (Version candidate : versionsOf(key)) {
            if (consistent.test(candidate) && candidate.invokedAt() < readCompleted && !overwritten(candidate, mustReflect)) {
                return true;
            }
        }
        return false;
    }

    private static boolean overwritten(Version candidate, List<Version> mustReflect) {
        for (Version m : mustReflect) {
            if (m != candidate && candidate.completedAt() < m.invokedAt()) {
                return true;
            }
        }
        return false;
    }

    private record Supersession(Version by, List<Op> evidence) {
    }

    /** The newest candidate and the newest write it had to give way to, for the report. */
    private static Supersession supersession(List<Version> candidates, List<Version> mustReflect, long readCompleted) {
        Version newest = candidates.stream().filter(v -> v.invokedAt() < readCompleted)
                .max(Comparator.comparingLong(Version::invokedAt)).orElseThrow();
        Version by = mustReflect.stream().filter(m -> m != newest && newest.completedAt() < m.invokedAt())
                .max(Comparator.comparingLong(Version::invokedAt)).orElseThrow();
        List<Op> evidence = new ArrayList<>();
        if (newest.op() != null) {
            evidence.add(newest.op());
        }
        evidence.add(by.op());
        return new Supersession(by, evidence);
    }

    /** A count lies between the keys that must match and the keys that may match, each key on its own. */
    private void judgeCount(Op op, Filter filter, long count, Map<Integer, List<Version>> seen) {
        int atLeast = 0;
        int atMost = 0;
        List<Integer> forced = new ArrayList<>();
        for (int key : keys()) {
            List<Version> mustReflect = mustReflect(op, key, seen);
            boolean mayMatch = allowed(key, v -> v.present() && filter.matches(v.doc()), op.completedAt(), mustReflect);
            boolean mayMiss = allowed(key, v -> !v.present() || !filter.matches(v.doc()), op.completedAt(), mustReflect);
            if (mayMatch) {
                atMost++;
                if (!mayMiss) {
                    atLeast++;
                    forced.add(key);
                }
            }
        }
        if (count < atLeast || count > atMost) {
            report(AnomalyType.WRONG_COUNT, "counted " + count + " but any interleaving gives " + atLeast + ".." + atMost
                    + " (keys that must match: " + forced + ")", -1, op);
        }
    }

    // ---- final state ---------------------------------------------------------------------------

    private void checkFinal(String source, List<Doc> docs) {
        Map<Integer, Doc> held = new HashMap<>();
        for (Doc doc : docs) {
            if (held.put(doc.key(), doc) != null) {
                anomalies.add(new Anomaly(AnomalyType.WRONG_RESULT, source + " holds key " + doc.key() + " twice", doc.key(), List.of()));
            }
        }
        for (int key : union(keys(), held.keySet())) {
            Doc doc = held.get(key);
            List<Version> mustReflect = versionsOf(key).stream().filter(v -> v.completedAt() != NEVER).toList();
            Predicate<Version> consistent;
            if (doc == null) {
                consistent = v -> !v.present();
            } else {
                Version written = byValue.get(doc.value());
                if (written == null || written.key() != key || !written.doc().equals(doc)) {
                    anomalies.add(new Anomaly(AnomalyType.UNKNOWN_VALUE, source + " holds " + doc + ", which no write wrote",
                            key, opsOn(key)));
                    continue;
                }
                consistent = v -> v == written;
            }
            if (!allowed(key, consistent, NEVER, mustReflect)) {
                List<Version> candidates = versionsOf(key).stream().filter(consistent).toList();
                Version by = supersession(candidates, mustReflect, NEVER).by();
                AnomalyType type = by.isDelete() ? AnomalyType.DELETE_UNDONE : AnomalyType.LOST_WRITE;
                anomalies.add(new Anomaly(type, source + " holds " + describe(doc) + " after " + by.op().call()
                        + " was acknowledged", key, opsOn(key)));
            }
        }
    }

    private List<Op> opsOn(int key) {
        Set<Op> ops = new HashSet<>();
        for (Version v : versionsOf(key)) {
            if (v.op() != null) {
                ops.add(v.op());
            }
        }
        return ops.stream().sorted(Comparator.comparingLong(Op::invokedAt)).toList();
    }

    private static String describe(Doc doc) {
        return doc == null ? "nothing" : doc.toString();
    }

    private void report(AnomalyType type, String message, int key, Op op) {
        report(type, message, key, op, List.of());
    }

    private void report(AnomalyType type, String message, int key, Op op, List<Op> context) {
        List<Op> evidence = new ArrayList<>();
        evidence.add(op);
        context.stream().filter(o -> o != null && o != op).forEach(evidence::add);
        anomalies.add(new Anomaly(type, message, key, evidence));
    }

    /** Every anomaly with its evidence and the key's whole history, for a failure message. */
    static String explain(List<Anomaly> anomalies, List<Op> history, int limit) {
        long origin = history.stream().mapToLong(Op::invokedAt).min().orElse(0);
        StringBuilder text = new StringBuilder();
        anomalies.stream().limit(limit).forEach(a -> {
            text.append(a.type()).append(": ").append(a.message()).append('\n');
            a.evidence().forEach(op -> text.append("    ").append(op.describe(origin)).append('\n'));
            if (a.key() >= 0) {
                text.append("  every write of key ").append(a.key()).append(":\n");
                history.stream().filter(op -> writes(op, a.key())).sorted(Comparator.comparingLong(Op::invokedAt))
                        .forEach(op -> text.append("    ").append(op.describe(origin)).append('\n'));
            }
        });
        if (anomalies.size() > limit) {
            text.append("... and ").append(anomalies.size() - limit).append(" more\n");
        }
        return text.toString();
    }

    private static boolean writes(Op op, int key) {
        if (op.call() instanceof Call.Insert insert) {
            return insert.docs().stream().anyMatch(d -> d.key() == key);
        }
        if (op.call() instanceof Call.Update update) {
            return update.doc().key() == key;
        }
        return op.call() instanceof Call.Delete delete && delete.key() == key;
    }
}
