package io.thermocline.proxy.tiered.writes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.thermocline.tiering.provenance.CopyUpDecision;
import io.thermocline.tiering.provenance.Fence;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.bson.types.ObjectId;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The write path's pure decisions, case by case: target resolution, guarded copies, insert paths, splitting. */
class WriteDecisionsTest {

    static final Fence DELETED = fence(Fence.Kind.USER_DELETE);
    static final Fence DELETED_AGAIN = fence(Fence.Kind.USER_DELETE);
    static final Fence EVICTED = fence(Fence.Kind.EVICTION);
    static final Fence EVICTED_AGAIN = fence(Fence.Kind.EVICTION);

    private static Fence fence(Fence.Kind kind) {
        return new Fence("shop.orders", new BsonInt32(1), kind, new ObjectId(), Instant.EPOCH);
    }

    static Stream<Arguments> coldTargets() {
        return Stream.of(
                arguments("neverFencedIsTombstoned", null, null, ColdTarget.TOMBSTONE),
                arguments("evictedBeforeTheReadAndUnchangedIsTombstoned", EVICTED, EVICTED, ColdTarget.TOMBSTONE),
                arguments("evictedSinceTheReadStartsOver", null, EVICTED, ColdTarget.START_OVER),
                arguments("evictedAgainSinceTheReadStartsOver", EVICTED, EVICTED_AGAIN, ColdTarget.START_OVER),
                arguments("deletedByAUserBeforeIsNotCountedAgain", DELETED, DELETED, ColdTarget.ALREADY_DELETED),
                arguments("deletedByAUserSinceTheReadIsNotCounted", null, DELETED_AGAIN, ColdTarget.ALREADY_DELETED),
                arguments("aFencePurgedSinceTheReadIsTombstoned", EVICTED, null, ColdTarget.TOMBSTONE));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("coldTargets")
    void decidesAColdTarget(String name, Fence atRead, Fence now, ColdTarget expected) {
        assertThat(ColdTarget.of(atRead, now)).isEqualTo(expected);
    }

    static final Fence DROP_STARTED = new Fence("shop.orders", Fence.namespaceId(), Fence.Kind.DROP_STARTED, new ObjectId(), Instant.EPOCH);
    static final Fence DROPPED = new Fence("shop.orders", Fence.namespaceId(), Fence.Kind.DROPPED, new ObjectId(), Instant.EPOCH);
    static final Fence DROPPED_AGAIN = new Fence("shop.orders", Fence.namespaceId(), Fence.Kind.DROPPED, new ObjectId(), Instant.EPOCH);

    static Stream<Arguments> dropFences() {
        return Stream.of(
                arguments("neverDroppedCopies", null, null, false),
                arguments("droppedBeforeTheReadCopies", DROPPED, DROPPED, false),
                arguments("aDropUnderWayDoesNotCopy", DROP_STARTED, DROP_STARTED, true),
                arguments("aDropStartedSinceTheReadDoesNotCopy", null, DROP_STARTED, true),
                arguments("aDropFinishedSinceTheReadDoesNotCopy", DROP_STARTED, DROPPED, true),
                arguments("anotherDropSinceTheReadDoesNotCopy", DROPPED, DROPPED_AGAIN, true),
                arguments("aDropFencePurgedSinceTheReadCopies", DROPPED, null, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dropFences")
    void aColdTargetIsCopiedToBeDeletedOnlyWhenNoDropMoved(String name, Fence atRead, Fence now, boolean moved) {
        assertThat(ColdTarget.dropMoved(atRead, now)).isEqualTo(moved);
    }

    static Stream<Arguments> archivedCopies() {
        return Stream.of(
                arguments("allowedIsCopied", CopyUpDecision.COPY, null, GuardedCopy.COPY),
                arguments("heldByTheFastTierIsLeft", CopyUpDecision.SKIP_FAST_TIER_HAS_IT, null, GuardedCopy.SKIP),
                arguments("goneFromTheArchiveIsLeft", CopyUpDecision.SKIP_NOT_IN_ARCHIVE, null, GuardedCopy.SKIP),
                arguments("deletedByAUserSinceTheReadStaysDeleted", CopyUpDecision.SKIP_DELETED_SINCE_READ, DELETED, GuardedCopy.SKIP),
                arguments("evictedSinceTheReadStartsOver", CopyUpDecision.SKIP_DELETED_SINCE_READ, EVICTED, GuardedCopy.START_OVER),
                arguments("tooSlowStartsOver", CopyUpDecision.SKIP_TOO_SLOW, null, GuardedCopy.START_OVER),
                arguments("droppedSinceTheReadStartsOver", CopyUpDecision.SKIP_NAMESPACE_DROPPED, null, GuardedCopy.START_OVER));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("archivedCopies")
    void decidesACopyOfAnArchivedDocument(String name, CopyUpDecision rule, Fence now, GuardedCopy expected) {
        assertThat(GuardedCopy.ofArchived(rule, now)).isEqualTo(expected);
    }

    static Stream<Arguments> vanished() {
        return Stream.of(
                arguments("evictedIsCopiedBack", EVICTED, GuardedCopy.COPY),
                arguments("deletedByAUserStaysDeleted", DELETED, GuardedCopy.SKIP),
                arguments("goneWithoutAFenceStartsOver", null, GuardedCopy.START_OVER));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("vanished")
    void decidesADocumentThatLeftTheFastTier(String name, Fence now, GuardedCopy expected) {
        assertThat(GuardedCopy.ofVanished(now)).isEqualTo(expected);
    }

    static Stream<Arguments> inserts() {
        return Stream.of(
                arguments("nothingExistsGoesAsSent", false, true, false, InsertPath.AS_SENT),
                arguments("nothingExistsNotRetryableGoesAsSent", false, false, false, InsertPath.AS_SENT),
                arguments("anotherDocumentExistsIsGuarded", true, true, false, InsertPath.GUARDED),
                arguments("notRetryableIsGuardedEvenOverItsOwnDocuments", true, false, true, InsertPath.GUARDED),
                arguments("aRetryFindingItsOwnDocumentsAsksTheFastTier", true, true, true, InsertPath.PROMOTE_THEN_AS_SENT));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("inserts")
    void choosesAnInsertPath(String name, boolean exists, boolean retryable, boolean same, InsertPath expected) {
        assertThat(InsertPath.of(exists, retryable, same)).isEqualTo(expected);
    }

    static Stream<Arguments> splits() {
        return Stream.of(
                arguments("oneUpdateMany", List.of("{q: {}, u: {$set: {a: 1}}, multi: true}"), false, true),
                arguments("aRetryableOneIsNot", List.of("{q: {}, u: {$set: {a: 1}}, multi: true}"), true, false),
                arguments("anUpsertIsNot", List.of("{q: {}, u: {$set: {a: 1}}, multi: true, upsert: true}"), false, false),
                arguments("aSingleUpdateIsNot", List.of("{q: {}, u: {$set: {a: 1}}}"), false, false),
                arguments("severalStatementsAreNot", List.of("{q: {}, u: {$set: {a: 1}}, multi: 1}", "{q: {}, u: {$set: {b: 1}}, multi: 1}"),
                        false, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("splits")
    void splitsOnlyOneMultiUpdateWithoutUpsert(String name, List<String> statements, boolean retryable, boolean expected) {
        assertThat(Updates.splittable(statements.stream().map(BsonDocument::parse).toList(), retryable)).isEqualTo(expected);
    }

    static final BsonInt32 ONE = new BsonInt32(1);
    static final Fence DROP = new Fence("shop.orders", Fence.namespaceId(), Fence.Kind.DROP_STARTED, new ObjectId(), Instant.EPOCH);

    static Stream<Arguments> copyPlans() {
        return Stream.of(
                arguments("absentAndNeverFencedIsCopied", Set.of(), Map.of(), Map.of(), List.of(ONE)),
                arguments("heldByTheFastTierIsNotCopied", Set.of(ONE), Map.of(), Map.of(), List.of()),
                arguments("deletedByAUserSinceTheReadIsNotCopied", Set.of(), Map.of(), Map.of(ONE, DELETED), List.of()),
                arguments("evictedSinceTheReadStartsOver", Set.of(), Map.of(), Map.of(ONE, EVICTED), null),
                arguments("aDropSinceTheReadStartsOver", Set.of(), Map.of(), Map.of(Fence.namespaceId(), DROP), null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("copyPlans")
    void plansTheCopiesOfATransaction(String name, Set<BsonValue> present, Map<BsonValue, Fence> atRead, Map<BsonValue, Fence> now,
                                      List<BsonValue> expected) {
        assertThat(GuardedCopy.toCopy(List.of(ONE), present, atRead, now, Instant.EPOCH.plusSeconds(1), Duration.ofSeconds(1),
                Duration.ofMinutes(5))).isEqualTo(expected);
    }
}
