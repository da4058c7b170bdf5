package io.thermocline.proxy.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.history.ChangeStreamChecker.AnomalyType;
import io.thermocline.proxy.history.ChangeStreamChecker.Event;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The change-stream checker on small hand-made histories: it finds what it must find, and nothing else. */
class ChangeStreamCheckerTest {

    static final Doc ADOPTED = new Doc(1, 100, 5, 1);

    private final List<Op> ops = new ArrayList<>();

    private void op(long invoked, long completed, Call call, Outcome outcome) {
        ops.add(new Op(ops.size(), ops.isEmpty() ? -1 : 0, Op.NO_SESSION, invoked, completed, call, outcome));
    }

    private List<AnomalyType> check(List<Event> events, List<Doc> finals) {
        return ChangeStreamChecker.check(ops, Map.of("c", events), finals).stream().map(ChangeStreamChecker.Anomaly::type).toList();
    }

    private ChangeStreamCheckerTest adopted() {
        op(0, 1, new Call.Insert(List.of(ADOPTED), true), Outcome.Written.of(1));
        return this;
    }

    @Test
    void aHistoryShownExactlyHasNoAnomaly() {
        adopted();
        Doc inserted = new Doc(2, 200, 5, 2);
        op(10, 20, new Call.Insert(List.of(inserted), true), Outcome.Written.of(1));
        op(30, 40, new Call.Update(new Doc(1, 101, 6, 1)), Outcome.Written.of(1));
        op(50, 60, new Call.Delete(2), Outcome.Written.of(1));
        op(70, 80, new Call.Delete(2), Outcome.Written.of(0));
        assertThat(check(List.of(new Event("insert", 2, 200), new Event("update", 1, 101), new Event("delete", 2, -1)),
                List.of(new Doc(1, 101, 6, 1)))).isEmpty();
    }

    @Test
    void aCopyUpsInsertIsSpurious() {
        adopted();
        op(30, 40, new Call.Update(new Doc(1, 101, 6, 1)), Outcome.Written.of(1));
        assertThat(check(List.of(new Event("insert", 1, 100), new Event("update", 1, 101)), List.of(new Doc(1, 101, 6, 1))))
                .contains(AnomalyType.SPURIOUS_EVENT);
    }

    @Test
    void aMissingDeleteIsFoundAndSoIsAnEvictionsDelete() {
        adopted();
        op(50, 60, new Call.Delete(1), Outcome.Written.of(1));
        assertThat(check(List.of(), List.of())).containsExactly(AnomalyType.MISSING_EVENT, AnomalyType.WRONG_FINAL_STATE);
        ops.clear();
        adopted();
        assertThat(check(List.of(new Event("delete", 1, -1)), List.of(ADOPTED))).contains(AnomalyType.SPURIOUS_EVENT);
    }

    @Test
    void anIndeterminateWriteMayOrMayNotShow() {
        adopted();
        op(50, 60, new Call.Delete(1), new Outcome.Indeterminate("timeout", true));
        op(70, 80, new Call.Update(new Doc(1, 102, 6, 1)), new Outcome.Indeterminate("timeout", true));
        assertThat(check(List.of(), List.of(ADOPTED))).isEmpty();
        assertThat(check(List.of(new Event("delete", 1, -1)), List.of())).isEmpty();
    }

    @Test
    void eventsOutOfTheRealTimeOrderOfAcknowledgedWrites() {
        adopted();
        op(10, 20, new Call.Update(new Doc(1, 101, 6, 1)), Outcome.Written.of(1));
        op(30, 40, new Call.Update(new Doc(1, 102, 7, 1)), Outcome.Written.of(1));
        assertThat(check(List.of(new Event("update", 1, 102), new Event("update", 1, 101)), List.of(new Doc(1, 102, 7, 1))))
                .contains(AnomalyType.OUT_OF_ORDER, AnomalyType.WRONG_FINAL_STATE);
    }

    @Test
    void aDuplicateEventAndDivergingConsumers() {
        adopted();
        op(10, 20, new Call.Update(new Doc(1, 101, 6, 1)), Outcome.Written.of(1));
        assertThat(check(List.of(new Event("update", 1, 101), new Event("update", 1, 101)), List.of(new Doc(1, 101, 6, 1))))
                .contains(AnomalyType.DUPLICATE_EVENT);
        Map<String, List<Event>> consumers = new LinkedHashMap<>();
        consumers.put("a", List.of(new Event("update", 1, 101)));
        consumers.put("b", List.of());
        assertThat(ChangeStreamChecker.check(ops, consumers, List.of(new Doc(1, 101, 6, 1))).stream().map(ChangeStreamChecker.Anomaly::type))
                .contains(AnomalyType.CONSUMERS_DIVERGE, AnomalyType.MISSING_EVENT);
    }

    @Test
    void anInsertRefusedWithADuplicateKeyShowsNothing() {
        adopted();
        Doc again = new Doc(1, 300, 5, 1);
        Doc fresh = new Doc(3, 301, 5, 3);
        op(10, 20, new Call.Insert(List.of(fresh, again), false), new Outcome.Written(1, java.util.Set.of(1)));
        assertThat(check(List.of(new Event("insert", 3, 301)), List.of(ADOPTED, fresh))).isEmpty();
        assertThat(check(List.of(new Event("insert", 3, 301), new Event("insert", 1, 300)), List.of(ADOPTED, fresh)))
                .contains(AnomalyType.SPURIOUS_EVENT);
    }
}
