package io.thermocline.proxy.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks what change-stream consumers saw against the acknowledged history, as one replica set's
 * stream would show it: every acknowledged write that changed something has its event, no event without
 * a write that may have caused it (a copy-up's insert, an eviction's delete, a warm copy), each write's
 * event once, the events of one document in the real-time order of its acknowledged writes, replaying the
 * events gives the final state, and every consumer saw the same events (whichever proxy it read from,
 * however often it resumed on another).
 */
final class ChangeStreamChecker {

    /** One event as the workload's documents name it: {@code value} names the write (-1 for a delete). */
    record Event(String type, int key, long value) {
        @Override
        public String toString() {
            return type + " k" + key + (value < 0 ? "" : " v" + value);
        }
    }

    enum AnomalyType { MISSING_EVENT, SPURIOUS_EVENT, DUPLICATE_EVENT, OUT_OF_ORDER, WRONG_FINAL_STATE, CONSUMERS_DIVERGE }

    record Anomaly(AnomalyType type, String consumer, String message) {
    }

    private ChangeStreamChecker() {
    }

    /**
     * @param history   every operation, the adoption (process -1, documents written before the streams opened) included
     * @param consumers each consumer's events, from the start sentinel to the end sentinel (both excluded)
     * @param finals    the documents at the end, as read through a proxy
     */
    static List<Anomaly> check(List<Op> history, Map<String, List<Event>> consumers, List<Doc> finals) {
        List<Anomaly> anomalies = new ArrayList<>();
        List<Event> first = null;
        String firstName = null;
        for (Map.Entry<String, List<Event>> consumer : consumers.entrySet()) {
            anomalies.addAll(checkOne(history, consumer.getKey(), consumer.getValue(), finals));
            if (first == null) {
                first = consumer.getValue();
                firstName = consumer.getKey();
            } else if (!first.equals(consumer.getValue())) {
                anomalies.add(new Anomaly(AnomalyType.CONSUMERS_DIVERGE, consumer.getKey(), "saw " + consumer.getValue().size()
                        + " events, " + firstName + " saw " + first.size() + "; first difference at " + firstDifference(first, consumer.getValue())));
            }
        }
        return anomalies;
    }

    private static String firstDifference(List<Event> a, List<Event> b) {
        for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
            Event x = i < a.size() ? a.get(i) : null;
            Event y = i < b.size() ? b.get(i) : null;
            if (x == null || !x.equals(y)) {
                return "#" + i + ": " + x + " vs " + y;
            }
        }
        return "none";
    }

    /** A write whose event a stream may show: the op, its key and the value it wrote (-1: a delete). */
    private record Write(Op op, int key, long value, boolean applied) {
        boolean acknowledged() {
            return op.acknowledged();
        }
    }

    static List<Anomaly> checkOne(List<Op> history, String consumer, List<Event> events, List<Doc> finals) {
        List<Anomaly> anomalies = new ArrayList<>();
        Map<Long, Write> byValue = new HashMap<>();
        Map<Long, String> inserted = new HashMap<>();
        Map<Integer, Doc> state = new TreeMap<>();
        Map<Integer, int[]> deletes = new HashMap<>(); // key -> {acknowledged n=1, indeterminate}
        for (Op op : history) {
            if (op.process() < 0 && op.call() instanceof Call.Insert adoption) {
                adoption.docs().forEach(d -> state.put(d.key(), d)); // before the streams opened
                continue;
            }
            if (op.call() instanceof Call.Insert insert) {
                Set<Integer> refused = op.outcome() instanceof Outcome.Written w ? w.duplicateKeys() : Set.of();
                int stop = insert.ordered() && !refused.isEmpty() ? refused.stream().min(Integer::compare).orElseThrow() : Integer.MAX_VALUE;
                for (int i = 0; i < insert.docs().size(); i++) {
                    Doc d = insert.docs().get(i);
                    boolean applied = op.acknowledged() && i < stop && !refused.contains(i);
                    boolean possible = !op.acknowledged() || applied;
                    if (possible) {
                        byValue.put(d.value(), new Write(op, d.key(), d.value(), applied));
                        inserted.put(d.value(), "insert");
                    }
                }
            } else if (op.call() instanceof Call.Update update) {
                boolean applied = op.outcome() instanceof Outcome.Written w && w.n() == 1;
                if (applied || !op.acknowledged()) {
                    byValue.put(update.doc().value(), new Write(op, update.doc().key(), update.doc().value(), applied));
                }
            } else if (op.call() instanceof Call.Delete delete) {
                int[] counts = deletes.computeIfAbsent(delete.key(), k -> new int[2]);
                if (!op.acknowledged()) {
                    counts[1]++;
                } else if (op.outcome() instanceof Outcome.Written w && w.n() == 1) {
                    counts[0]++;
                }
            }
        }
        Set<Long> seen = new HashSet<>();
        Map<Integer, Integer> deleteEvents = new HashMap<>();
        Map<Integer, List<Write>> orderOfKey = new LinkedHashMap<>();
        for (Event e : events) {
            switch (e.type()) {
                case "insert", "update", "replace" -> {
                    Write w = byValue.get(e.value());
                    boolean rightKind = w != null && ("insert".equals(e.type()) == inserted.containsKey(e.value()));
                    if (w == null || w.key() != e.key() || !rightKind) {
                        anomalies.add(new Anomaly(AnomalyType.SPURIOUS_EVENT, consumer, e + ": no " + e.type()
                                + " wrote this version (a copy-up or a warm copy shown?)" + (w == null ? "" : "; written by " + w.op().call())));
                        continue;
                    }
                    if (!seen.add(e.value())) {
                        anomalies.add(new Anomaly(AnomalyType.DUPLICATE_EVENT, consumer, e + " shown twice"));
                        continue;
                    }
                    orderOfKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(w);
                    Doc before = state.get(e.key());
                    if ("insert".equals(e.type()) == (before != null)) {
                        anomalies.add(new Anomaly(AnomalyType.OUT_OF_ORDER, consumer, e + ": the events before it "
                                + (before == null ? "deleted the document or never inserted it" : "left it present")));
                    }
                    if ("insert".equals(e.type())) {
                        state.put(e.key(), findInserted(w));
                    } else if (before != null) {
                        state.put(e.key(), new Doc(e.key(), e.value(), ((Call.Update) w.op().call()).doc().age(), before.bucket()));
                    }
                }
                case "delete" -> {
                    deleteEvents.merge(e.key(), 1, Integer::sum);
                    state.remove(e.key());
                }
                default -> anomalies.add(new Anomaly(AnomalyType.SPURIOUS_EVENT, consumer, e + ": an event of a kind the workload never causes"));
            }
        }
        for (Write w : byValue.values()) {
            if (w.applied() && !seen.contains(w.value())) {
                anomalies.add(new Anomaly(AnomalyType.MISSING_EVENT, consumer, "no event for " + w.op().call() + " (acknowledged, v" + w.value() + ")"));
            }
        }
        Set<Integer> deletedKeys = new HashSet<>(deletes.keySet());
        deletedKeys.addAll(deleteEvents.keySet());
        for (int key : deletedKeys) {
            int[] counts = deletes.getOrDefault(key, new int[2]);
            int shown = deleteEvents.getOrDefault(key, 0);
            if (shown < counts[0]) {
                anomalies.add(new Anomaly(AnomalyType.MISSING_EVENT, consumer, "k" + key + ": " + counts[0]
                        + " acknowledged deletes (n=1), " + shown + " delete events"));
            } else if (shown > counts[0] + counts[1]) {
                anomalies.add(new Anomaly(AnomalyType.SPURIOUS_EVENT, consumer, "k" + key + ": " + shown + " delete events for "
                        + counts[0] + " acknowledged and " + counts[1] + " indeterminate deletes (an eviction shown?)"));
            }
        }
        for (Map.Entry<Integer, List<Write>> key : orderOfKey.entrySet()) {
            List<Write> order = key.getValue();
            for (int i = 0; i < order.size(); i++) {
                for (int j = i + 1; j < order.size(); j++) {
                    Op earlier = order.get(i).op();
                    Op later = order.get(j).op();
                    if (later.completedAt() < earlier.invokedAt()) {
                        anomalies.add(new Anomaly(AnomalyType.OUT_OF_ORDER, consumer, "k" + key.getKey() + ": the event of " + later.call()
                                + " (acknowledged first) comes after the event of " + earlier.call()));
                    }
                }
            }
        }
        Map<Integer, Doc> expected = new TreeMap<>();
        finals.forEach(d -> expected.put(d.key(), d));
        if (!expected.equals(state)) {
            List<String> differences = new ArrayList<>();
            Set<Integer> keys = new HashSet<>(expected.keySet());
            keys.addAll(state.keySet());
            for (int k : new java.util.TreeSet<>(keys)) {
                if (!java.util.Objects.equals(expected.get(k), state.get(k))) {
                    differences.add("k" + k + " events " + state.get(k) + " vs final " + expected.get(k));
                }
            }
            anomalies.add(new Anomaly(AnomalyType.WRONG_FINAL_STATE, consumer, "replaying the events does not give the final state: "
                    + String.join("; ", differences.subList(0, Math.min(8, differences.size())))));
        }
        return anomalies;
    }

    private static Doc findInserted(Write w) {
        for (Doc d : ((Call.Insert) w.op().call()).docs()) {
            if (d.value() == w.value()) {
                return d;
            }
        }
        throw new IllegalStateException("no document v" + w.value() + " in " + w.op().call());
    }
}
