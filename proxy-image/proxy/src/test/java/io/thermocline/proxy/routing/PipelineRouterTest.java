package io.thermocline.proxy.routing;

import static io.thermocline.proxy.routing.RoutingFixtures.AFTER;
import static io.thermocline.proxy.routing.RoutingFixtures.BEFORE;
import static io.thermocline.proxy.routing.RoutingFixtures.TABLE;
import static io.thermocline.proxy.routing.RoutingFixtures.date;
import static io.thermocline.proxy.routing.RoutingFixtures.oid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.stream.Stream;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PipelineRouterTest {

    static final String HOT_ORDERS = "{$match: {createdAt: {$gte: " + date(AFTER) + "}}}";
    static final String COLD_ORDERS = "{$match: {createdAt: {$gte: " + date(BEFORE) + "}}}";
    static final String HOT_EVENTS = "{$match: {_id: {$gte: " + oid(AFTER) + "}}}";
    static final String HOT_AUDIT = "{$match: {'meta.ts': {$gte: " + date(AFTER) + "}}}";

    static ReadRoute fast(Reason reason) {
        return new ReadRoute.FastTier(reason);
    }

    static ReadRoute archive(Reason reason) {
        return new ReadRoute.Archive(reason);
    }

    static ReadRoute refused(Reason reason, String mentions) {
        return new ReadRoute.Refused(reason, mentions);
    }

    /** On shop.orders unless the case names another collection. */
    static Arguments c(String name, String pipeline, ReadRoute expected) {
        return arguments(name, "shop", "orders", pipeline, expected);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                c("leadingMatchAboveBoundRoutesPipelineToFastTier", "[" + HOT_ORDERS + ", {$group: {_id: '$status', n: {$sum: 1}}}]", fast(Reason.AGE_BOUND_COVERED)),
                c("anyOfSeveralLeadingMatchesProves", "[{$match: {status: 'A'}}, " + HOT_ORDERS + ", {$sort: {total: -1}}]", fast(Reason.AGE_BOUND_COVERED)),
                c("lookupIntoHotForeignWithProvingSubPipelineRoutesToFastTier",
                        "[" + HOT_ORDERS + ", {$lookup: {from: 'events', let: {o: '$_id'}, pipeline: [" + HOT_EVENTS + "], as: 'ev'}}]", fast(Reason.AGE_BOUND_COVERED)),
                c("unionWithHotForeignRoutesToFastTier", "[" + HOT_ORDERS + ", {$unionWith: {coll: 'audit', pipeline: [" + HOT_AUDIT + "]}}]", fast(Reason.AGE_BOUND_COVERED)),
                c("graphLookupRestrictedToHotDocumentsRoutesToFastTier",
                        "[" + HOT_ORDERS + ", {$graphLookup: {from: 'orders', startWith: '$parent', connectFromField: 'parent', connectToField: '_id', as: 'chain', "
                                + "restrictSearchWithMatch: {createdAt: {$gte: " + date(AFTER) + "}}}}]", fast(Reason.AGE_BOUND_COVERED)),
                c("facetWithoutForeignNamespaceRoutesToFastTier", "[" + HOT_ORDERS + ", {$facet: {a: [{$count: 'n'}], b: [{$limit: 1}]}}]", fast(Reason.AGE_BOUND_COVERED)),
                arguments("documentsJoinedWithHotTieredNamespaceRoutesToFastTier", "shop", null,
                        "[{$documents: [{k: 1}]}, {$lookup: {from: 'orders', pipeline: [" + HOT_ORDERS + "], as: 'o'}}]", fast(Reason.AGE_BOUND_COVERED)),
                c("changeStreamOnTieredCollectionIsServedByFastTier", "[{$changeStream: {}}, {$match: {operationType: 'insert'}}]", fast(Reason.CHANGE_STREAM_ON_FAST_TIER)),

                c("emptyPipelineOnTieredCollectionRoutesToArchive", "[]", archive(Reason.NO_AGE_BOUND)),
                c("matchAfterAStageThatRewritesTheAgeFieldDoesNotProve",
                        "[{$addFields: {createdAt: '$$NOW'}}, " + HOT_ORDERS + "]", archive(Reason.NO_AGE_BOUND)),
                c("matchAfterLimitDoesNotProve", "[{$limit: 10}, " + HOT_ORDERS + "]", archive(Reason.NO_AGE_BOUND)),
                c("leadingMatchBelowBoundRoutesToArchive", "[" + COLD_ORDERS + "]", archive(Reason.AGE_BOUND_BELOW_COVERAGE)),
                arguments("tieredCollectionWithNothingCoveredRoutesToArchive", "ops", "metrics",
                        "[{$match: {at: {$gte: " + date(AFTER) + "}}}]", archive(Reason.NOTHING_COVERED)),
                arguments("untieredSourceRoutesToArchive", "shop", "customers", "[{$match: {createdAt: {$gte: " + date(AFTER) + "}}}]", archive(Reason.UNTIERED_NAMESPACE)),
                // the archive answers, but claimed by the tiered path so the read barrier covers the tiered collection
                arguments("untieredSourceJoiningHotTieredWaitsForTheBarrier", "shop", "customers",
                        "[{$lookup: {from: 'orders', pipeline: [" + HOT_ORDERS + "], as: 'o'}}]", archive(Reason.FOREIGN_NAMESPACE_TIERED)),
                arguments("untieredSourceUnionWithTieredWaitsForTheBarrier", "shop", "customers",
                        "[{$unionWith: 'orders'}]", archive(Reason.FOREIGN_NAMESPACE_TIERED)),
                arguments("untieredSourceJoiningUntieredStaysPassThrough", "shop", "customers",
                        "[{$lookup: {from: 'customers', localField: 'a', foreignField: '_id', as: 'c'}}]", archive(Reason.UNTIERED_NAMESPACE)),
                c("lookupIntoUntieredCollectionRoutesToArchive",
                        "[" + HOT_ORDERS + ", {$lookup: {from: 'customers', localField: 'cust', foreignField: '_id', as: 'c'}}]", archive(Reason.FOREIGN_NAMESPACE_UNTIERED)),
                c("lookupIntoUntieredCollectionOfAnotherDatabaseRoutesToArchive",
                        "[" + HOT_ORDERS + ", {$lookup: {from: {db: 'crm', coll: 'orders'}, localField: 'cust', foreignField: '_id', as: 'c'}}]", archive(Reason.FOREIGN_NAMESPACE_UNTIERED)),
                c("lookupByLocalFieldIntoTieredCollectionNeverProves",
                        "[" + HOT_ORDERS + ", {$lookup: {from: 'events', localField: 'ev', foreignField: '_id', as: 'e'}}]", archive(Reason.FOREIGN_NAMESPACE_NOT_PROVABLY_HOT)),
                c("lookupWithColdSubPipelineRoutesToArchive",
                        "[" + HOT_ORDERS + ", {$lookup: {from: 'orders', pipeline: [" + COLD_ORDERS + "], as: 'o'}}]", archive(Reason.FOREIGN_NAMESPACE_NOT_PROVABLY_HOT)),
                c("lookupIntoTieredCollectionWithNothingCoveredRoutesToArchive",
                        "[" + HOT_ORDERS + ", {$lookup: {from: {db: 'ops', coll: 'metrics'}, pipeline: [{$match: {at: {$gte: " + date(AFTER) + "}}}], as: 'm'}}]",
                        archive(Reason.FOREIGN_NAMESPACE_NOT_PROVABLY_HOT)),
                c("unionWithByNameNeverProves", "[" + HOT_ORDERS + ", {$unionWith: 'events'}]", archive(Reason.FOREIGN_NAMESPACE_NOT_PROVABLY_HOT)),
                c("graphLookupWithoutRestrictionNeverProves",
                        "[" + HOT_ORDERS + ", {$graphLookup: {from: 'orders', startWith: '$parent', connectFromField: 'parent', connectToField: '_id', as: 'chain'}}]",
                        archive(Reason.FOREIGN_NAMESPACE_NOT_PROVABLY_HOT)),
                c("lookupInsideFacetIsFollowed",
                        "[" + HOT_ORDERS + ", {$facet: {c: [{$lookup: {from: 'customers', localField: 'cust', foreignField: '_id', as: 'c'}}]}}]",
                        archive(Reason.FOREIGN_NAMESPACE_UNTIERED)),
                c("lookupInsideLookupPipelineIsFollowed",
                        "[" + HOT_ORDERS + ", {$lookup: {from: 'events', pipeline: [" + HOT_EVENTS + ", {$unionWith: 'customers'}], as: 'e'}}]",
                        archive(Reason.FOREIGN_NAMESPACE_UNTIERED)),
                c("outToUntieredCollectionRunsOnArchive", "[" + HOT_ORDERS + ", {$out: 'report'}]", archive(Reason.OUTPUT_TO_UNTIERED_NAMESPACE)),
                c("mergeIntoUntieredCollectionOfAnotherDatabaseRunsOnArchive",
                        "[" + HOT_ORDERS + ", {$merge: {into: {db: 'bi', coll: 'daily'}, whenMatched: 'replace'}}]", archive(Reason.OUTPUT_TO_UNTIERED_NAMESPACE)),
                c("collStatsOnTieredCollectionDescribesTheArchive", "[{$collStats: {count: {}}}]", archive(Reason.STATISTICS_OF_ARCHIVE)),
                c("indexStatsDescribesTheArchive", "[{$indexStats: {}}]", archive(Reason.STATISTICS_OF_ARCHIVE)),
                arguments("currentOpIsAnsweredByTheArchive", "admin", null, "[{$currentOp: {}}]", archive(Reason.ADMIN_ON_ARCHIVE)),
                arguments("documentsAloneTouchNoNamespace", "shop", null, "[{$documents: [{a: 1}]}]", archive(Reason.NO_SOURCE_NAMESPACE)),
                arguments("changeStreamOnUntieredCollectionPassesToArchive", "shop", "customers", "[{$changeStream: {}}]", archive(Reason.UNTIERED_NAMESPACE)),
                arguments("databaseChangeStreamWithoutTieredCollectionsPassesToArchive", "crm", null, "[{$changeStream: {}}]", archive(Reason.UNTIERED_NAMESPACE)),
                c("malformedStageIsLeftToTheArchiveToReject", "[{$match: {}, $limit: 1}]", archive(Reason.MALFORMED_COMMAND)),

                c("outIntoTieredCollectionIsRefused", "[" + HOT_ORDERS + ", {$out: 'orders'}]", refused(Reason.OUTPUT_TO_TIERED_NAMESPACE, "shop.orders")),
                arguments("mergeIntoTieredCollectionIsRefusedWhateverTheSource", "shop", "customers",
                        "[{$merge: {into: 'events'}}]", refused(Reason.OUTPUT_TO_TIERED_NAMESPACE, "shop.events")),
                arguments("databaseChangeStreamOverTieredCollectionsIsRefused", "shop", null, "[{$changeStream: {}}]", refused(Reason.CHANGE_STREAM_SPANS_TIERS, "database shop")),
                arguments("clusterChangeStreamIsRefusedWhenAnyCollectionIsTiered", "admin", null,
                        "[{$changeStream: {allChangesForCluster: true}}]", refused(Reason.CHANGE_STREAM_SPANS_TIERS, "whole cluster")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void routes(String name, String database, String collection, String pipeline, ReadRoute expected) {
        BsonArray stages = BsonDocument.parse("{p: " + pipeline + "}").getArray("p");
        ReadRoute actual = PipelineRouter.route(database, collection, stages, TABLE);
        if (expected instanceof ReadRoute.Refused refused) {
            assertThat(actual).isInstanceOf(ReadRoute.Refused.class);
            assertThat(actual.reason()).isEqualTo(refused.reason());
            assertThat(((ReadRoute.Refused) actual).message()).contains(refused.message());
        } else {
            assertThat(actual).isEqualTo(expected);
        }
    }
}
