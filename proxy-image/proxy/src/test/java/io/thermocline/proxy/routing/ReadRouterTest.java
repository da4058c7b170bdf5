package io.thermocline.proxy.routing;

import static io.thermocline.proxy.routing.RoutingFixtures.AFTER;
import static io.thermocline.proxy.routing.RoutingFixtures.AT;
import static io.thermocline.proxy.routing.RoutingFixtures.AUDIT;
import static io.thermocline.proxy.routing.RoutingFixtures.BEFORE;
import static io.thermocline.proxy.routing.RoutingFixtures.BOUND;
import static io.thermocline.proxy.routing.RoutingFixtures.EVENTS;
import static io.thermocline.proxy.routing.RoutingFixtures.LATER;
import static io.thermocline.proxy.routing.RoutingFixtures.ORDERS;
import static io.thermocline.proxy.routing.RoutingFixtures.date;
import static io.thermocline.proxy.routing.RoutingFixtures.doc;
import static io.thermocline.proxy.routing.RoutingFixtures.millis;
import static io.thermocline.proxy.routing.RoutingFixtures.oid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.state.TieringState;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ReadRouterTest {

    static ReadRoute fast() {
        return new ReadRoute.FastTier(Reason.AGE_BOUND_COVERED);
    }

    static ReadRoute archive(Reason reason) {
        return new ReadRoute.Archive(reason);
    }

    static ReadRoute point(BsonValue id) {
        return new ReadRoute.PointReadFastFirst(id, Reason.POINT_READ_BY_ID);
    }

    static Arguments c(String name, CollectionPolicy policy, String filter, ReadRoute expected) {
        return arguments(name, policy, filter, BOUND, expected);
    }

    static Stream<Arguments> provablyHot() {
        return Stream.of(
                c("rangeOnAgeFieldAboveBoundRoutesToFastTier", ORDERS, "{createdAt: {$gte: " + date(AFTER) + "}}", fast()),
                c("rangeStartingExactlyAtBoundRoutesToFastTier", ORDERS, "{createdAt: {$gte: " + date(AT) + "}}", fast()),
                c("strictlyGreaterThanAboveBoundRoutesToFastTier", ORDERS, "{createdAt: {$gt: " + date(AFTER) + "}}", fast()),
                c("implicitEqualityOnHotDateRoutesToFastTier", ORDERS, "{createdAt: " + date(AFTER) + "}", fast()),
                c("explicitEqOnHotDateRoutesToFastTier", ORDERS, "{createdAt: {$eq: " + date(AFTER) + "}}", fast()),
                c("closedRangeAboveBoundRoutesToFastTier", ORDERS, "{createdAt: {$gte: " + date(AFTER) + ", $lt: " + date(LATER) + "}}", fast()),
                c("ageConjunctNextToOtherFieldsRoutesToFastTier", ORDERS, "{status: 'A', createdAt: {$gte: " + date(AFTER) + "}, total: {$gt: 5}}", fast()),
                c("ageConjunctInsideAndRoutesToFastTier", ORDERS, "{$and: [{status: 'A'}, {createdAt: {$gte: " + date(AFTER) + "}}]}", fast()),
                c("ageConjunctInsideNestedAndRoutesToFastTier", ORDERS, "{$and: [{$and: [{createdAt: {$gt: " + date(AFTER) + "}}]}]}", fast()),
                c("anyProvingConjunctOfAndSuffices", ORDERS, "{$and: [{createdAt: {$lt: " + date(LATER) + "}}, {createdAt: {$gte: " + date(AFTER) + "}}]}", fast()),
                c("strongestConjunctWinsOverAColdOne", ORDERS, "{$and: [{createdAt: {$gte: " + date(BEFORE) + "}}, {createdAt: {$gte: " + date(AFTER) + "}}]}", fast()),
                c("orWhoseEveryBranchIsHotRoutesToFastTier", ORDERS, "{$or: [{createdAt: {$gte: " + date(AFTER) + "}}, {createdAt: " + date(AT) + ", status: 'B'}]}", fast()),
                c("orNestedInAndWithHotBranchesRoutesToFastTier", ORDERS, "{$and: [{$or: [{createdAt: {$gte: " + date(AFTER) + "}}, {createdAt: {$gt: " + date(LATER) + "}}]}]}", fast()),
                c("inWithOnlyHotDatesRoutesToFastTier", ORDERS, "{createdAt: {$in: [" + date(AFTER) + ", " + date(AT) + "]}}", fast()),
                c("epochMillisRangeAboveBoundRoutesToFastTier", ORDERS, "{createdAt: {$gte: {$numberLong: '" + millis(AFTER) + "'}}}", fast()),
                c("epochMillisDoubleRangeAboveBoundRoutesToFastTier", ORDERS, "{createdAt: {$gt: " + millis(AFTER) + ".5}}", fast()),
                c("epochMillisDecimalRangeAboveBoundRoutesToFastTier", ORDERS, "{createdAt: {$gte: {$numberDecimal: '" + millis(AFTER) + "'}}}", fast()),
                c("dottedAgeFieldRangeAboveBoundRoutesToFastTier", AUDIT, "{'meta.ts': {$gte: " + date(AFTER) + "}}", fast()),
                c("objectIdRangeAboveBoundRoutesToFastTierForIdPolicy", EVENTS, "{_id: {$gte: " + oid(AFTER) + "}}", fast()),
                c("objectIdEqualityAboveBoundIsProvedNotJustPointRead", EVENTS, "{_id: " + oid(AFTER) + "}", fast()),
                c("objectIdInAboveBoundRoutesToFastTierForIdPolicy", EVENTS, "{_id: {$in: [" + oid(AFTER) + ", " + oid(LATER) + "]}}", fast()),
                c("exprNextToAProvingConjunctRoutesToFastTier", ORDERS, "{$expr: {$gt: ['$a', '$b']}, createdAt: {$gte: " + date(AFTER) + "}}", fast()),
                c("norNextToAProvingConjunctRoutesToFastTier", ORDERS, "{$nor: [{status: 'X'}], createdAt: {$gte: " + date(AFTER) + "}}", fast()),
                c("notNextToAProvingOperatorRoutesToFastTier", ORDERS, "{createdAt: {$not: {$eq: " + date(LATER) + "}, $gte: " + date(AFTER) + "}}", fast()));
    }

    static Stream<Arguments> notProvablyHot() {
        return Stream.of(
                c("rangeOnAgeFieldBelowBoundRoutesToArchive", ORDERS, "{createdAt: {$gte: " + date(BEFORE) + "}}", archive(Reason.AGE_BOUND_BELOW_COVERAGE)),
                c("rangeJustBelowBoundRoutesToArchive", ORDERS, "{createdAt: {$gte: {$date: '2026-02-28T23:59:59.999Z'}}}", archive(Reason.AGE_BOUND_BELOW_COVERAGE)),
                c("upperBoundAloneNeverProves", ORDERS, "{createdAt: {$lt: " + date(LATER) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("lteAloneNeverProves", ORDERS, "{createdAt: {$lte: " + date(LATER) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("emptyFilterRoutesToArchive", ORDERS, "{}", archive(Reason.NO_AGE_BOUND)),
                c("missingFilterRoutesToArchive", ORDERS, null, archive(Reason.NO_AGE_BOUND)),
                c("filterOnOtherFieldRoutesToArchive", ORDERS, "{status: 'A'}", archive(Reason.NO_AGE_BOUND)),
                c("fieldThatOnlyStartsLikeAgeFieldNeverProves", ORDERS, "{createdAtLocal: {$gte: " + date(AFTER) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("orWithOneUnprovenBranchRoutesToArchive", ORDERS, "{$or: [{createdAt: {$gte: " + date(AFTER) + "}}, {status: 'A'}]}", archive(Reason.NO_AGE_BOUND)),
                c("orWithOneColdBranchRoutesToArchive", ORDERS, "{$or: [{createdAt: {$gte: " + date(AFTER) + "}}, {createdAt: {$gte: " + date(BEFORE) + "}}]}", archive(Reason.AGE_BOUND_BELOW_COVERAGE)),
                c("orWithANonDocumentBranchRoutesToArchive", ORDERS, "{$or: [{createdAt: {$gte: " + date(AFTER) + "}}, 1]}", archive(Reason.NO_AGE_BOUND)),
                c("emptyOrRoutesToArchive", ORDERS, "{$or: []}", archive(Reason.NO_AGE_BOUND)),
                c("malformedAndRoutesToArchive", ORDERS, "{$and: {createdAt: {$gte: " + date(AFTER) + "}}}", archive(Reason.NO_AGE_BOUND)),
                c("norNeverProves", ORDERS, "{$nor: [{createdAt: {$lt: " + date(AFTER) + "}}]}", archive(Reason.NO_AGE_BOUND)),
                c("notNeverProvesBecauseItMatchesMissingAges", ORDERS, "{createdAt: {$not: {$lt: " + date(AFTER) + "}}}", archive(Reason.NO_AGE_BOUND)),
                c("neNeverProves", ORDERS, "{createdAt: {$ne: " + date(BEFORE) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("ninNeverProves", ORDERS, "{createdAt: {$nin: [" + date(BEFORE) + "]}}", archive(Reason.NO_AGE_BOUND)),
                c("existsNeverProves", ORDERS, "{createdAt: {$exists: true}}", archive(Reason.NO_AGE_BOUND)),
                c("typeNeverProves", ORDERS, "{createdAt: {$type: 'date'}}", archive(Reason.NO_AGE_BOUND)),
                c("inWithOneColdValueRoutesToArchive", ORDERS, "{createdAt: {$in: [" + date(AFTER) + ", " + date(BEFORE) + "]}}", archive(Reason.AGE_BOUND_BELOW_COVERAGE)),
                c("inWithNullNeverProvesBecauseNullMatchesMissing", ORDERS, "{createdAt: {$in: [" + date(AFTER) + ", null]}}", archive(Reason.NO_AGE_BOUND)),
                c("inWithRegexNeverProves", ORDERS, "{createdAt: {$in: [" + date(AFTER) + ", /x/]}}", archive(Reason.NO_AGE_BOUND)),
                c("inWithStringNeverProves", ORDERS, "{createdAt: {$in: [" + date(AFTER) + ", '" + AFTER + "']}}", archive(Reason.NO_AGE_BOUND)),
                c("emptyInNeverProves", ORDERS, "{createdAt: {$in: []}}", archive(Reason.NO_AGE_BOUND)),
                c("isoStringRangeNeverProvesBecauseStringOrderIsNotTimeOrder", ORDERS, "{createdAt: {$gte: '" + AFTER + "'}}", archive(Reason.NO_AGE_BOUND)),
                c("isoStringEqualityNeverProves", ORDERS, "{createdAt: '" + AFTER + "'}", archive(Reason.NO_AGE_BOUND)),
                c("exprComparisonNeverProvesBecauseItComparesAcrossTypes", ORDERS, "{$expr: {$gte: ['$createdAt', " + date(AFTER) + "]}}", archive(Reason.NO_AGE_BOUND)),
                c("elemMatchNeverProves", ORDERS, "{createdAt: {$elemMatch: {$gte: " + date(AFTER) + "}}}", archive(Reason.NO_AGE_BOUND)),
                c("allNeverProves", ORDERS, "{createdAt: {$all: [" + date(AFTER) + "]}}", archive(Reason.NO_AGE_BOUND)),
                c("arrayEqualityNeverProves", ORDERS, "{createdAt: [" + date(AFTER) + "]}", archive(Reason.NO_AGE_BOUND)),
                c("regexOnAgeFieldNeverProves", ORDERS, "{createdAt: /^2026/}", archive(Reason.NO_AGE_BOUND)),
                c("nanNeverProves", ORDERS, "{createdAt: {$gte: NaN}}", archive(Reason.NO_AGE_BOUND)),
                c("operatorDocumentMixedWithFieldsNeverProves", ORDERS, "{createdAt: {$gte: " + date(AFTER) + ", x: 1}}", archive(Reason.NO_AGE_BOUND)),
                c("whereNeverProves", ORDERS, "{$where: 'this.createdAt > 0'}", archive(Reason.NO_AGE_BOUND)),
                c("embeddedDocumentEqualityOnParentOfDottedAgeFieldNeverProves", AUDIT, "{meta: {ts: " + date(AFTER) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("elemMatchOnParentOfDottedAgeFieldNeverProves", AUDIT, "{meta: {$elemMatch: {ts: {$gte: " + date(AFTER) + "}}}}", archive(Reason.NO_AGE_BOUND)),
                c("leafNameAloneDoesNotMatchDottedAgeField", AUDIT, "{ts: {$gte: " + date(AFTER) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("dateRangeOnIdPolicyNeverProves", EVENTS, "{_id: {$gte: " + date(AFTER) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("objectIdRangeOnDateFieldPolicyNeverProves", ORDERS, "{createdAt: {$gte: " + oid(AFTER) + "}}", archive(Reason.NO_AGE_BOUND)),
                c("objectIdRangeBelowBoundRoutesToArchive", EVENTS, "{_id: {$gte: " + oid(BEFORE) + "}}", archive(Reason.AGE_BOUND_BELOW_COVERAGE)),
                c("idEqualityWithAnotherPredicateIsNotAPointRead", ORDERS, "{_id: 'o1', status: 'A'}", archive(Reason.NO_AGE_BOUND)),
                c("idInIsNotAPointRead", ORDERS, "{_id: {$in: ['o1', 'o2']}}", archive(Reason.NO_AGE_BOUND)),
                c("idNullIsNotAPointRead", ORDERS, "{_id: null}", archive(Reason.NO_AGE_BOUND)),
                c("idRegexIsNotAPointRead", ORDERS, "{_id: /^o/}", archive(Reason.NO_AGE_BOUND)),
                c("idRangeIsNotAPointRead", ORDERS, "{_id: {$gt: 'o1'}}", archive(Reason.NO_AGE_BOUND)),
                c("untieredNamespaceRoutesToArchive", null, "{createdAt: {$gte: " + date(AFTER) + "}}", archive(Reason.UNTIERED_NAMESPACE)),
                arguments("anyRangeRoutesToArchiveWhenNothingIsCovered", ORDERS, "{createdAt: {$gte: " + date(LATER) + "}}", CoverageBound.nothing(), archive(Reason.NOTHING_COVERED)),
                arguments("unknownBoundRoutesToArchive", ORDERS, "{createdAt: {$gte: " + date(LATER) + "}}", null, archive(Reason.NOTHING_COVERED)));
    }

    static Stream<Arguments> pointReads() {
        return Stream.of(
                c("pointReadByIdTriesFastTierFirst", ORDERS, "{_id: 'o1'}", point(new BsonString("o1"))),
                c("pointReadByIdWithEqOperatorTriesFastTierFirst", ORDERS, "{_id: {$eq: 7}}", point(new BsonInt32(7))),
                c("pointReadByIdWithCommentTriesFastTierFirst", ORDERS, "{_id: 'o1', $comment: 'why'}", point(new BsonString("o1"))),
                c("pointReadByEmbeddedDocumentIdTriesFastTierFirst", ORDERS, "{_id: {region: 'eu', n: 1}}", point(doc("{region: 'eu', n: 1}"))),
                c("objectIdEqualityBelowBoundFallsBackToPointRead", EVENTS, "{_id: " + oid(BEFORE) + "}", point(doc("{x: " + oid(BEFORE) + "}").get("x"))),
                arguments("pointReadTriesFastTierFirstEvenWhenNothingIsCovered", ORDERS, "{_id: 'o1'}", CoverageBound.nothing(), point(new BsonString("o1"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource({"provablyHot", "notProvablyHot", "pointReads"})
    void routes(String name, CollectionPolicy policy, String filter, CoverageBound bound, ReadRoute expected) {
        BsonDocument parsed = doc(filter);
        assertThat(ReadRouter.route(parsed, policy, bound)).isEqualTo(expected);
    }

    static Stream<Arguments> collations() {
        return Stream.of(
                arguments("stringIdUnderCaseInsensitiveCollationIsNotAPointRead", "{_id: 'o1'}", "{locale: 'en', strength: 2}", archive(Reason.NO_AGE_BOUND)),
                arguments("embeddedStringIdUnderCaseInsensitiveCollationIsNotAPointRead", "{_id: {k: 'o1'}}", "{locale: 'fr', strength: 1}", archive(Reason.NO_AGE_BOUND)),
                arguments("numericIdUnderAnyCollationIsAPointRead", "{_id: 7}", "{locale: 'en', strength: 2}", point(new BsonInt32(7))),
                arguments("stringIdUnderSimpleCollationIsAPointRead", "{_id: 'o1'}", "{locale: 'simple'}", point(new BsonString("o1"))),
                arguments("collationNeverChangesADateProof", "{createdAt: {$gte: " + date(AFTER) + "}}", "{locale: 'en', strength: 1}", fast()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("collations")
    void routesWithCollation(String name, String filter, String collation, ReadRoute expected) {
        assertThat(ReadRouter.route(doc(filter), ORDERS, BOUND, doc(collation))).isEqualTo(expected);
    }

    @Test
    void routingTableRoutesWithEachNamespacesPolicyAndBound() {
        BsonDocument hot = doc("{createdAt: {$gte: " + date(AFTER) + "}}");
        assertThat(RoutingFixtures.TABLE.routeRead("shop.orders", hot)).isEqualTo(fast());
        assertThat(RoutingFixtures.TABLE.routeRead("shop.customers", hot)).isEqualTo(archive(Reason.UNTIERED_NAMESPACE));
        assertThat(RoutingFixtures.TABLE.routeRead("ops.metrics", doc("{at: {$gte: " + date(AFTER) + "}}"))).isEqualTo(archive(Reason.NOTHING_COVERED));
        assertThat(RoutingFixtures.TABLE.withState(TieringState.initial()).routeRead("shop.orders", hot))
                .isEqualTo(archive(Reason.NOTHING_COVERED));
    }

    @Test
    void routingTableKnowsWhichDatabasesHoldTieredCollections() {
        assertThat(RoutingFixtures.TABLE.hasTieredCollectionIn("shop")).isTrue();
        assertThat(RoutingFixtures.TABLE.hasTieredCollectionIn("crm")).isFalse();
        assertThat(RoutingFixtures.TABLE.hasTieredCollectionIn(null)).isTrue();
        assertThat(RoutingTable.passThrough().hasTieredCollectionIn(null)).isFalse();
    }
}
