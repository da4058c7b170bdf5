package io.thermocline.proxy.history;

import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.DELETE_UNDONE;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.FUTURE_READ;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.LOST_WRITE;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.MONOTONIC_READS;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.READ_YOUR_WRITES;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.STALE_READ;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.UNKNOWN_VALUE;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.WRONG_COUNT;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.WRONG_N;
import static io.thermocline.proxy.history.HistoryChecker.AnomalyType.WRONG_RESULT;
import static io.thermocline.proxy.history.HistoryChecker.Mode.LINEARIZABLE;
import static io.thermocline.proxy.history.HistoryChecker.Mode.SESSION;
import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.history.HistoryChecker.AnomalyType;
import io.thermocline.proxy.history.HistoryChecker.Mode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The checker on hand-made histories: each anomaly it must find, and the concurrent interleavings it
 * must accept. Times are milliseconds; p is the client, s its explicit session.
 */
class HistoryCheckerTest {

    static final long EDGE = 1_000_000;
    static final Doc A1 = new Doc(1, 101, EDGE + 10, 0);
    static final Doc A2 = new Doc(1, 102, EDGE + 20, 0);
    static final Doc B1 = new Doc(2, 201, EDGE + 10, 0);
    static final Doc C1 = new Doc(3, 301, EDGE + 10, 0);
    static final Doc OLD_A = new Doc(1, 103, EDGE - 10, 0);

    /** A history under construction; {@link #anomalies} checks it. */
    static final class H {
        final List<Op> ops = new ArrayList<>();
        final Map<String, List<Doc>> finals = new LinkedHashMap<>();

        H op(int process, int session, long from, long to, Call call, Outcome outcome) {
            ops.add(new Op(ops.size(), process, session, from * 1_000_000, to * 1_000_000, call, outcome));
            return this;
        }

        H insert(int process, long from, long to, Doc... docs) {
            return op(process, Op.NO_SESSION, from, to, new Call.Insert(List.of(docs), true), Outcome.Written.of(docs.length));
        }

        H update(int process, long from, long to, Doc doc, long n) {
            return op(process, Op.NO_SESSION, from, to, new Call.Update(doc), Outcome.Written.of(n));
        }

        H delete(int process, long from, long to, int key, long n) {
            return op(process, Op.NO_SESSION, from, to, new Call.Delete(key), Outcome.Written.of(n));
        }

        H read(int process, int session, long from, long to, int key, Doc seen) {
            return op(process, session, from, to, new Call.PointRead(key),
                    new Outcome.Found(seen == null ? List.of() : List.of(seen)));
        }

        H scan(int process, long from, long to, Filter filter, Doc... seen) {
            return op(process, Op.NO_SESSION, from, to, new Call.Scan(filter), new Outcome.Found(Arrays.asList(seen)));
        }

        H count(int process, long from, long to, Filter filter, long count) {
            return op(process, Op.NO_SESSION, from, to, new Call.Count(filter), new Outcome.Counted(count));
        }

        H finalState(Doc... docs) {
            finals.put("archive", List.of(docs));
            return this;
        }

        List<AnomalyType> anomalies(Mode mode) {
            List<HistoryChecker.Anomaly> found = HistoryChecker.check(ops, mode, finals);
            System.out.print(HistoryChecker.explain(found, ops, 5));
            return found.stream().map(HistoryChecker.Anomaly::type).toList();
        }
    }

    @Test
    void aSequentialCorrectHistoryHasNoAnomaly() {
        H h = new H().insert(1, 0, 10, A1).read(2, Op.NO_SESSION, 20, 30, 1, A1)
                .update(1, 40, 50, A2, 1).read(2, Op.NO_SESSION, 60, 70, 1, A2)
                .count(3, 60, 70, new Filter.Bucket(0), 1)
                .delete(1, 80, 90, 1, 1).read(2, Op.NO_SESSION, 100, 110, 1, null)
                .update(1, 120, 130, A2.withValue(104), 0)
                .finalState();
        assertThat(h.anomalies(LINEARIZABLE)).isEmpty();
        assertThat(h.anomalies(SESSION)).isEmpty();
    }

    @Test
    void anAcknowledgedInsertMissingFromTheFinalStateIsLost() {
        assertThat(new H().insert(1, 0, 10, A1).finalState().anomalies(SESSION)).containsExactly(LOST_WRITE);
    }

    @Test
    void anAcknowledgedUpdateOverwrittenByAnOlderVersionIsLost() {
        assertThat(new H().insert(1, 0, 10, A1).update(1, 20, 30, A2, 1).finalState(A1).anomalies(SESSION))
                .containsExactly(LOST_WRITE);
    }

    @Test
    void aDocumentBackAfterItsAcknowledgedDeleteIsADeleteUndone() {
        assertThat(new H().insert(1, 0, 10, A1).delete(2, 20, 30, 1, 1).finalState(A1).anomalies(SESSION))
                .containsExactly(DELETE_UNDONE);
    }

    @Test
    void concurrentOrIndeterminateWritesMayEndEitherWay() {
        // update [10,20] and delete [15,25] overlap: either may be last
        H overlapping = new H().insert(1, 0, 5, A1).update(1, 10, 20, A2, 1).delete(2, 15, 25, 1, 1);
        assertThat(overlapping.finalState(A2).anomalies(LINEARIZABLE)).isEmpty();
        assertThat(overlapping.finalState().anomalies(LINEARIZABLE)).isEmpty();
        H pending = new H().op(1, Op.NO_SESSION, 0, 10, new Call.Insert(List.of(A1), true), Outcome.Indeterminate.timeout("timeout"));
        assertThat(pending.finalState(A1).anomalies(LINEARIZABLE)).isEmpty();
        assertThat(pending.finalState().anomalies(LINEARIZABLE)).isEmpty();
    }

    @Test
    void aReadThatMissesAWriteAcknowledgedBeforeItBeganIsStaleWhenLinearizable() {
        H h = new H().insert(1, 0, 10, A1).read(2, Op.NO_SESSION, 20, 30, 1, null).finalState(A1);
        assertThat(h.anomalies(LINEARIZABLE)).containsExactly(STALE_READ);
        assertThat(h.anomalies(SESSION)).as("another client, no session: allowed in session mode").isEmpty();
    }

    @Test
    void aReadOverlappingTheWriteMaySeeEitherVersion() {
        assertThat(new H().insert(1, 0, 10, A1).read(2, Op.NO_SESSION, 5, 8, 1, null).read(3, Op.NO_SESSION, 5, 12, 1, A1)
                .finalState(A1).anomalies(LINEARIZABLE)).isEmpty();
    }

    @Test
    void aReadReturningADeletedDocumentAfterTheDeleteWasAcknowledgedIsStale() {
        assertThat(new H().insert(1, 0, 10, A1).delete(1, 20, 30, 1, 1).read(2, Op.NO_SESSION, 40, 50, 1, A1).finalState()
                .anomalies(LINEARIZABLE)).containsExactly(STALE_READ);
    }

    @Test
    void aValueWrittenAfterTheReadCompletedIsFromTheFuture() {
        assertThat(new H().read(2, Op.NO_SESSION, 0, 5, 1, A1).insert(1, 10, 20, A1).finalState(A1).anomalies(SESSION))
                .containsExactly(FUTURE_READ);
    }

    @Test
    void aValueNoWriteWroteIsUnknown() {
        assertThat(new H().insert(1, 0, 10, A1).read(2, Op.NO_SESSION, 20, 30, 1, A2).finalState(A1).anomalies(SESSION))
                .containsExactly(UNKNOWN_VALUE);
    }

    @Test
    void aKnownValueWithOtherFieldsOrOutsideTheFilterIsAWrongResult() {
        Doc torn = new Doc(1, A1.value(), EDGE - 99, 0);
        assertThat(new H().insert(1, 0, 10, A1).read(2, Op.NO_SESSION, 20, 30, 1, torn).finalState(A1).anomalies(SESSION))
                .containsExactly(WRONG_RESULT);
        assertThat(new H().insert(1, 0, 10, OLD_A).scan(2, 20, 30, new Filter.AgeAtLeast(EDGE), OLD_A).finalState(OLD_A)
                .anomalies(SESSION)).containsExactly(WRONG_RESULT);
    }

    @Test
    void aSessionMissingItsOwnWriteBreaksReadYourWrites() {
        H h = new H().op(1, 7, 0, 10, new Call.Insert(List.of(A1), true), Outcome.Written.of(1))
                .read(1, 7, 20, 30, 1, null).finalState(A1);
        assertThat(h.anomalies(SESSION)).containsExactly(READ_YOUR_WRITES);
    }

    @Test
    void aSessionGoingBackToAnOlderVersionBreaksMonotonicReads() {
        H h = new H().insert(1, 0, 5, A1).update(1, 6, 10, A2, 1)
                .read(2, 7, 20, 30, 1, A2).read(2, 7, 40, 50, 1, A1).finalState(A2);
        assertThat(h.anomalies(SESSION)).containsExactly(MONOTONIC_READS);
        assertThat(h.anomalies(LINEARIZABLE)).containsExactly(STALE_READ);
        H noSession = new H().insert(1, 0, 5, A1).update(1, 6, 10, A2, 1)
                .read(2, Op.NO_SESSION, 20, 30, 1, A2).read(2, Op.NO_SESSION, 40, 50, 1, A1).finalState(A2);
        assertThat(noSession.anomalies(SESSION)).isEmpty();
    }

    @Test
    void anAgeMovedAcrossTheFilterMustBeReflectedByScans() {
        Filter recent = new Filter.AgeAtLeast(EDGE);
        // A1 is recent, then an acknowledged update makes it old: a later scan must not return A1
        assertThat(new H().insert(1, 0, 5, A1).update(1, 10, 20, OLD_A, 1).scan(2, 30, 40, recent, A1).finalState(OLD_A)
                .anomalies(LINEARIZABLE)).containsExactly(STALE_READ);
        // old, then moved into the window: a later scan must return it
        assertThat(new H().insert(1, 0, 5, OLD_A).update(1, 10, 20, A2, 1).scan(2, 30, 40, recent).finalState(A2)
                .anomalies(LINEARIZABLE)).containsExactly(STALE_READ);
        assertThat(new H().insert(1, 0, 5, OLD_A).update(1, 10, 20, A2, 1).scan(2, 30, 40, recent, A2).finalState(A2)
                .anomalies(LINEARIZABLE)).isEmpty();
    }

    @Test
    void aCountOutsideWhatAnyInterleavingAllowsIsWrong() {
        H acknowledged = new H().insert(1, 0, 10, A1).insert(1, 10, 20, B1).insert(1, 20, 30, C1);
        assertThat(acknowledged.count(2, 50, 60, new Filter.Bucket(0), 2).finalState(A1, B1, C1).anomalies(LINEARIZABLE))
                .containsExactly(WRONG_COUNT);
        H concurrentDelete = new H().insert(1, 0, 10, A1).insert(1, 10, 20, B1).insert(1, 20, 30, C1)
                .delete(3, 45, 65, 2, 1).count(2, 50, 60, new Filter.Bucket(0), 2).finalState(A1, C1);
        assertThat(concurrentDelete.anomalies(LINEARIZABLE)).isEmpty();
        assertThat(new H().insert(1, 0, 10, A1).count(2, 50, 60, new Filter.Bucket(0), 2).finalState(A1)
                .anomalies(LINEARIZABLE)).containsExactly(WRONG_COUNT);
    }

    @Test
    void aBatchInsertReportingFewerDocumentsThanItInsertedHasAWrongN() {
        // the archive holds key 2; unordered [1, 2, 3] must insert 1 and 3 and report n=2 with E11000 for index 1
        H h = new H().insert(0, 0, 1, B1)
                .op(1, Op.NO_SESSION, 10, 20, new Call.Insert(List.of(A1, new Doc(2, 202, EDGE, 0), C1), false),
                        new Outcome.Written(1, Set.of(1)));
        assertThat(h.finalState(B1).anomalies(LINEARIZABLE)).containsExactlyInAnyOrder(WRONG_N, LOST_WRITE, LOST_WRITE);
        H right = new H().insert(0, 0, 1, B1)
                .op(1, Op.NO_SESSION, 10, 20, new Call.Insert(List.of(A1, new Doc(2, 202, EDGE, 0), C1), false),
                        new Outcome.Written(2, Set.of(1)));
        assertThat(right.finalState(A1, B1, C1).anomalies(LINEARIZABLE)).isEmpty();
        // ordered: the documents after the refused one are never inserted; a read that sees one is wrong
        H ordered = new H().insert(0, 0, 1, B1)
                .op(1, Op.NO_SESSION, 10, 20, new Call.Insert(List.of(A1, new Doc(2, 202, EDGE, 0), C1), true),
                        new Outcome.Written(1, Set.of(1)))
                .read(2, Op.NO_SESSION, 30, 40, 3, C1);
        assertThat(ordered.finalState(A1, B1).anomalies(LINEARIZABLE)).containsExactly(UNKNOWN_VALUE);
    }

    @Test
    void anInsertOverAnExistingKeyOrARefusalOfAFreeOneHasAWrongN() {
        Doc again = new Doc(2, 202, EDGE, 0);
        assertThat(new H().insert(0, 0, 1, B1).insert(1, 10, 20, again).finalState(again).anomalies(LINEARIZABLE))
                .contains(WRONG_N);
        assertThat(new H().op(1, Op.NO_SESSION, 10, 20, new Call.Insert(List.of(B1), false), new Outcome.Written(0, Set.of(0)))
                .finalState().anomalies(LINEARIZABLE)).containsExactly(WRONG_N);
    }

    @Test
    void anUpdateOrDeleteMatchingNothingWhileTheDocumentExistedHasAWrongN() {
        assertThat(new H().insert(1, 0, 10, A1).update(2, 20, 30, A2, 0).finalState(A1).anomalies(LINEARIZABLE))
                .containsExactly(WRONG_N);
        assertThat(new H().insert(1, 0, 10, A1).delete(2, 20, 30, 1, 0).finalState(A1).anomalies(SESSION))
                .containsExactly(WRONG_N);
        assertThat(new H().delete(2, 20, 30, 1, 1).finalState().anomalies(SESSION)).containsExactly(WRONG_N);
    }

    @Test
    void anUpdateThatFindsADeletedDocumentShowsTheDeleteWasUndone() {
        // the final state alone looks fine (the update's version is the last): the update's n=1 gives the delete away
        assertThat(new H().insert(1, 0, 10, A1).delete(2, 20, 30, 1, 1).update(3, 40, 50, A2, 1).finalState(A2)
                .anomalies(SESSION)).containsExactly(DELETE_UNDONE);
    }

    @Test
    void anErrorAHealthyDatabaseDoesNotReturnIsReportedATimeoutIsNot() {
        assertThat(new H().op(1, 7, 0, 10, new Call.PointRead(1), new Outcome.Indeterminate("RawBsonDocument instances are immutable", false))
                .finalState().anomalies(SESSION)).containsExactly(AnomalyType.UNEXPECTED_ERROR);
        assertThat(new H().op(1, 7, 0, 10, new Call.PointRead(1), Outcome.Indeterminate.timeout("code 262: causal wait"))
                .finalState().anomalies(SESSION)).isEmpty();
    }
}
