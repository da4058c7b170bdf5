package io.thermocline.tiering.feeder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.TransactionId;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.OwnTransactions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.Test;

class BatchPlannerTest {

    static final Namespace NS = Namespace.parse("shop.orders");
    static final BatchPlanner COALESCING = new BatchPlanner(Set.of(NS), true);
    static final BatchPlanner ORDERED = new BatchPlanner(Set.of(NS), false);
    static final TransactionId WORKER_TXN = txn(1, 7);
    static final TransactionId USER_TXN = txn(2, 3);

    int clock = 1;

    static TransactionId txn(int session, long number) {
        return new TransactionId(new BsonDocument("id", new BsonBinary(new byte[] {(byte) session, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})), number);
    }

    static BsonDocument doc(int id, String state) {
        return new BsonDocument("_id", new BsonInt32(id)).append("state", new BsonString(state));
    }

    ChangeEvent event(Namespace ns, String op, BsonValue id, BsonDocument full, TransactionId transaction) {
        int t = clock++;
        return new ChangeEvent(new BsonDocument("_data", new BsonString("token-" + t)), ns, op, id, full, transaction,
                new BsonTimestamp(100, transaction == null ? t : 50));
    }

    ChangeEvent insert(int id, String state) {
        return event(NS, "insert", new BsonInt32(id), doc(id, state), null);
    }

    ChangeEvent update(int id, String lookedUp) {
        return event(NS, "update", new BsonInt32(id), lookedUp == null ? null : doc(id, lookedUp), null);
    }

    ChangeEvent delete(int id) {
        return event(NS, "delete", new BsonInt32(id), null, null);
    }

    ChangeEvent marker(TransactionId transaction) {
        return event(Namespace.parse("thermocline.provenance"), "update", new BsonString("evictor/a"), null, transaction);
    }

    ChangeEvent fence(int id, Fence.Kind kind, TransactionId transaction) {
        Fence fence = new Fence(NS.toString(), new BsonInt32(id), kind, new ObjectId(), Instant.EPOCH);
        return event(Namespace.parse("thermocline.fences"), "replace", Fence.key(NS.toString(), new BsonInt32(id)), fence.toBson(), transaction);
    }

    static List<MirrorAction> actions(MirrorPlan plan) {
        return plan.actions().getOrDefault(NS, List.of());
    }

    @Test
    void repeatedWritesToOneDocumentMirrorOnlyTheLastState() {
        MirrorPlan plan = COALESCING.plan(List.of(insert(1, "a"), update(1, "b"), update(1, "c"), insert(2, "x")), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(
                new MirrorAction.Upsert(NS, new BsonInt32(1), doc(1, "c")),
                new MirrorAction.Upsert(NS, new BsonInt32(2), doc(2, "x")));
        assertThat(plan.counts().coalesced()).isEqualTo(2);
        assertThat(plan.counts().mirrored()).isEqualTo(2);
    }

    @Test
    void deleteAfterUpdatesWins() {
        MirrorPlan plan = COALESCING.plan(List.of(insert(1, "a"), update(1, "b"), delete(1)), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Delete(NS, new BsonInt32(1)));
    }

    @Test
    void reinsertAfterDeleteWins() {
        MirrorPlan plan = COALESCING.plan(List.of(insert(1, "a"), delete(1), insert(1, "again")), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Upsert(NS, new BsonInt32(1), doc(1, "again")));
    }

    @Test
    void idsEqualInMongoDbAreOneDocumentWhateverTheirNumericType() {
        // 1, 1.0, NumberLong(1) and NumberDecimal("1.00") are one _id in MongoDB: insert 1, delete 1.0 must end deleted
        ChangeEvent insertInt = event(NS, "insert", new BsonInt32(1), doc(1, "a"), null);
        ChangeEvent deleteDouble = event(NS, "delete", new org.bson.BsonDouble(1.0), null, null);
        MirrorPlan plan = COALESCING.plan(List.of(insertInt, deleteDouble), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Delete(NS, new org.bson.BsonDouble(1.0)));

        ChangeEvent deleteLong = event(NS, "delete", new org.bson.BsonInt64(2), null, null);
        ChangeEvent reinsertDecimal = event(NS, "insert", new org.bson.BsonDecimal128(org.bson.types.Decimal128.parse("2.00")),
                doc(2, "again"), null);
        MirrorPlan again = COALESCING.plan(List.of(deleteLong, reinsertDecimal), new OwnTransactions(null));
        assertThat(actions(again)).hasSize(1).first().isInstanceOf(MirrorAction.Upsert.class);
        assertThat(again.counts().coalesced()).isEqualTo(1);
    }

    @Test
    void idsThatDifferInMongoDbStayApart() {
        // field order matters in embedded documents; a string "1" is not the number 1
        BsonDocument ab = new BsonDocument("a", new BsonInt32(1)).append("b", new BsonInt32(2));
        BsonDocument ba = new BsonDocument("b", new BsonInt32(2)).append("a", new BsonInt32(1));
        MirrorPlan plan = COALESCING.plan(List.of(event(NS, "insert", ab, new BsonDocument("_id", ab), null),
                event(NS, "delete", ba, null, null), event(NS, "insert", new BsonString("1"), doc(1, "s"), null),
                event(NS, "delete", new BsonInt32(1), null, null)), new OwnTransactions(null));
        assertThat(actions(plan)).hasSize(4);
        assertThat(plan.counts().coalesced()).isZero();
    }

    @Test
    void withoutCoalescingEveryWriteIsMirroredInOrder() {
        MirrorPlan plan = ORDERED.plan(List.of(insert(1, "a"), update(1, "b"), delete(1)), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(
                new MirrorAction.Upsert(NS, new BsonInt32(1), doc(1, "a")),
                new MirrorAction.Upsert(NS, new BsonInt32(1), doc(1, "b")),
                new MirrorAction.Delete(NS, new BsonInt32(1)));
        assertThat(plan.counts().coalesced()).isZero();
    }

    @Test
    void updateWhoseLookupFoundNothingDoesNotHideAnEarlierWrite() {
        MirrorPlan plan = COALESCING.plan(List.of(insert(1, "a"), update(1, null)), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Upsert(NS, new BsonInt32(1), doc(1, "a")));
        assertThat(plan.counts().ignored()).isEqualTo(1);
    }

    /** Issue 37: the archive lacks such an update until its delete is applied, so the plan names it. */
    @Test
    void anUpdateWhoseImageWentMissingIsNamedUnlessItsDocumentIsDeletedLaterInTheBatch() {
        record Case(String why, List<ChangeEvent> events, BsonTimestamp missingImageAt) {
        }
        clock = 10;
        ChangeEvent insert = insert(1, "a");
        ChangeEvent lostUpdate = update(1, null);
        ChangeEvent delete = delete(1);
        ChangeEvent otherLost = update(2, null);
        ChangeEvent fenceDelete = fence(1, Fence.Kind.USER_DELETE, null);
        ChangeEvent reinserted = insert(1, "again");
        ChangeEvent lostAgain = update(1, null);
        ChangeEvent ownLost = event(NS, "update", new BsonInt32(3), null, WORKER_TXN);
        ChangeEvent lostReplace = event(NS, "replace", new BsonInt32(4), null, null);
        ChangeEvent lost = update(5, null);
        ChangeEvent deleteBefore = delete(5);
        List<Case> cases = List.of(
                new Case("alone", List.of(lostUpdate), lostUpdate.clusterTime()),
                new Case("after the insert it hides", List.of(insert, lostUpdate), lostUpdate.clusterTime()),
                new Case("its delete follows in the batch", List.of(insert, lostUpdate, delete), null),
                new Case("a user-delete fence follows", List.of(lostUpdate, fenceDelete), null),
                new Case("the earliest of two documents", List.of(lostUpdate, otherLost, delete), otherLost.clusterTime()),
                new Case("missing again after a delete and reinsert", List.of(lostUpdate, delete, reinserted, lostAgain), lostAgain.clusterTime()),
                new Case("a delete before it resolves nothing", List.of(deleteBefore, lost), lost.clusterTime()),
                new Case("an own transaction's event is never mirrored", List.of(marker(WORKER_TXN), ownLost), null),
                new Case("a replace too", List.of(lostReplace), lostReplace.clusterTime()));
        for (Case c : cases) {
            for (BatchPlanner planner : List.of(COALESCING, ORDERED)) {
                assertThat(planner.plan(c.events(), new OwnTransactions(null)).missingImageAt()).as(c.why()).isEqualTo(c.missingImageAt());
            }
        }
    }

    @Test
    void eventsOfAMarkedTransactionAreNotMirrored() {
        ChangeEvent evicted = event(NS, "delete", new BsonInt32(1), null, WORKER_TXN);
        ChangeEvent evictionFence = fence(1, Fence.Kind.EVICTION, WORKER_TXN);
        ChangeEvent warmCopy = event(NS, "insert", new BsonInt32(2), doc(2, "copied"), WORKER_TXN);
        MirrorPlan plan = COALESCING.plan(List.of(marker(WORKER_TXN), evicted, evictionFence, warmCopy, insert(3, "user")),
                new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Upsert(NS, new BsonInt32(3), doc(3, "user")));
        assertThat(plan.counts().own()).isEqualTo(4);
    }

    @Test
    void aUserTransactionWithoutMarkerIsMirrored() {
        ChangeEvent userDelete = event(NS, "delete", new BsonInt32(1), null, USER_TXN);
        MirrorPlan plan = COALESCING.plan(List.of(marker(WORKER_TXN), userDelete), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Delete(NS, new BsonInt32(1)));
    }

    @Test
    void userFenceIsMirroredAsDeleteEvenWhenTheFastTierNoLongerHeldTheDocument() {
        MirrorPlan plan = COALESCING.plan(List.of(fence(9, Fence.Kind.USER_DELETE, USER_TXN)), new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Delete(NS, new BsonInt32(9)));
    }

    @Test
    void evictionFenceOutsideAMarkedTransactionIsNeverAUserDelete() {
        MirrorPlan plan = COALESCING.plan(List.of(fence(9, Fence.Kind.EVICTION, null)), new OwnTransactions(null));
        assertThat(actions(plan)).isEmpty();
    }

    @Test
    void fenceOfAnUntieredNamespaceAndFencePurgesAreIgnored() {
        ChangeEvent other = event(Namespace.parse("thermocline.fences"), "insert", Fence.key("other.coll", new BsonInt32(1)), null, null);
        ChangeEvent purge = event(Namespace.parse("thermocline.fences"), "delete", Fence.key(NS.toString(), new BsonInt32(1)), null, null);
        MirrorPlan plan = COALESCING.plan(List.of(other, purge), new OwnTransactions(null));
        assertThat(plan.actionCount()).isZero();
    }

    @Test
    void checkpointInsideATransactionStopsJustBeforeItsClusterTime() {
        ChangeEvent userInTxn = event(NS, "insert", new BsonInt32(1), doc(1, "a"), USER_TXN);
        MirrorPlan plan = COALESCING.plan(List.of(insert(5, "x"), userInTxn), new OwnTransactions(null));
        assertThat(plan.mirroredThrough()).isEqualTo(new BsonTimestamp(100, 49));
        assertThat(plan.openOwnTransaction()).isNull();
    }

    @Test
    void checkpointInsideAnOwnTransactionRemembersItSoAResumeStillSkipsItsRest() {
        List<ChangeEvent> first = List.of(marker(WORKER_TXN), event(NS, "delete", new BsonInt32(1), null, WORKER_TXN));
        MirrorPlan plan = COALESCING.plan(first, new OwnTransactions(null));
        assertThat(plan.openOwnTransaction()).isEqualTo(WORKER_TXN);

        OwnTransactions restored = new OwnTransactions(plan.openOwnTransaction());
        MirrorPlan rest = COALESCING.plan(List.of(event(NS, "delete", new BsonInt32(2), null, WORKER_TXN)), restored);
        assertThat(rest.actionCount()).isZero();
    }

    @Test
    void checkpointAfterAPlainEventCoversItsClusterTime() {
        ChangeEvent last = insert(1, "a");
        MirrorPlan plan = COALESCING.plan(List.of(last), new OwnTransactions(null));
        assertThat(plan.mirroredThrough()).isEqualTo(last.clusterTime());
        assertThat(plan.resumeToken()).isEqualTo(last.resumeToken());
    }

    @Test
    void justBeforeCrossesASecondBoundary() {
        assertThat(BatchPlanner.justBefore(new BsonTimestamp(10, 0))).isEqualTo(new BsonTimestamp(9, Integer.MAX_VALUE));
        assertThat(BatchPlanner.justBefore(new BsonTimestamp(10, 5))).isEqualTo(new BsonTimestamp(10, 4));
    }

    @Test
    void justAfterUndoesJustBefore() {
        for (BsonTimestamp t : List.of(new BsonTimestamp(10, 0), new BsonTimestamp(10, 7), new BsonTimestamp(10, Integer.MAX_VALUE))) {
            assertThat(Feeder.justAfter(BatchPlanner.justBefore(t))).isEqualTo(t);
        }
    }

    @Test
    void coalescingReplayedBatchesConvergesToTheSameArchive() {
        List<ChangeEvent> events = new ArrayList<>(List.of(insert(1, "a"), update(1, "b"), delete(2), insert(2, "c"), delete(1)));
        java.util.Map<BsonValue, BsonDocument> once = apply(new java.util.HashMap<>(), COALESCING.plan(events, new OwnTransactions(null)));
        java.util.Map<BsonValue, BsonDocument> twice = apply(apply(new java.util.HashMap<>(), ORDERED.plan(events, new OwnTransactions(null))),
                COALESCING.plan(events, new OwnTransactions(null)));
        assertThat(twice).isEqualTo(once).containsOnlyKeys(new BsonInt32(2));
    }

    @Test
    void ownEventsKeptAsTheirPositionOnlyAreSkippedAndTheCheckpointPassesThem() {
        TransactionId promotion = txn(3, 1);
        List<ChangeEvent> events = List.of(marker(promotion).positionOnly(),
                event(NS, "insert", new BsonInt32(2), doc(2, "copied"), promotion).positionOnly(), insert(3, "user"));
        MirrorPlan plan = COALESCING.plan(events, new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Upsert(NS, new BsonInt32(3), doc(3, "user")));
        assertThat(plan.counts().own()).isEqualTo(2);
        assertThat(plan.mirroredThrough()).isEqualTo(events.get(2).clusterTime());
    }

    @Test
    void aDropOfATieredNamespaceHasNoDocumentKeyAndPassesWithoutFailingTheBatch() {
        List<ChangeEvent> events = List.of(insert(1, "user"), event(NS, "drop", null, null, null));
        MirrorPlan plan = COALESCING.plan(events, new OwnTransactions(null));
        assertThat(actions(plan)).containsExactly(new MirrorAction.Upsert(NS, new BsonInt32(1), doc(1, "user")));
        assertThat(plan.mirroredThrough()).isEqualTo(events.get(1).clusterTime());
    }

    @Test
    void aUserEventWithoutItsDocumentKeyFailsTheBatchInsteadOfBeingSkipped() {
        ChangeEvent stripped = insert(1, "user").positionOnly();
        assertThatThrownBy(() -> COALESCING.plan(List.of(stripped), new OwnTransactions(null)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("without its document key");
    }

    static java.util.Map<BsonValue, BsonDocument> apply(java.util.Map<BsonValue, BsonDocument> archive, MirrorPlan plan) {
        for (MirrorAction action : actions(plan)) {
            if (action instanceof MirrorAction.Upsert upsert) {
                archive.put(upsert.documentId(), upsert.document());
            } else {
                archive.remove(action.documentId());
            }
        }
        return archive;
    }
}
