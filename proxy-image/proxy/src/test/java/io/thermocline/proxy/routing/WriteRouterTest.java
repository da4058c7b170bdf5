package io.thermocline.proxy.routing;

import static io.thermocline.proxy.routing.RoutingFixtures.AFTER;
import static io.thermocline.proxy.routing.RoutingFixtures.BEFORE;
import static io.thermocline.proxy.routing.RoutingFixtures.BOUND;
import static io.thermocline.proxy.routing.RoutingFixtures.EVENTS;
import static io.thermocline.proxy.routing.RoutingFixtures.ORDERS;
import static io.thermocline.proxy.routing.RoutingFixtures.date;
import static io.thermocline.proxy.routing.RoutingFixtures.doc;
import static io.thermocline.proxy.routing.RoutingFixtures.oid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.CoverageBound;
import java.util.Optional;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WriteRouterTest {

    enum Kind { INSERT, UPDATE, DELETE, FIND_AND_MODIFY }

    static final String HOT = "createdAt: {$gte: " + date(AFTER) + "}";
    static final String COLD = "createdAt: {$gte: " + date(BEFORE) + "}";
    static final BsonValue O1 = new BsonString("o1");

    static Arguments c(String name, Kind kind, CollectionPolicy policy, String statement, WriteRoute expected) {
        return arguments(name, kind, policy, statement, BOUND, expected);
    }

    static WriteRoute fast(Reason reason) {
        return new WriteRoute.FastTier(reason);
    }

    static WriteRoute point(BsonValue id, Reason reason) {
        return new WriteRoute.PointWrite(id, reason);
    }

    static WriteRoute resolve(String filter, String sort, boolean upsert, Optional<BsonValue> upsertId) {
        return new WriteRoute.ResolveOneThenPointWrite(doc(filter), doc(sort), upsert, upsertId, Reason.SINGLE_WRITE_NOT_PROVABLY_HOT);
    }

    static WriteRoute both(boolean upsert, Optional<BsonValue> upsertId) {
        return new WriteRoute.BothTiers(upsert, upsertId, Reason.MULTI_WRITE_NOT_PROVABLY_HOT);
    }

    static BsonValue objectId(String iso) {
        return doc("{x: " + oid(iso) + "}").get("x");
    }

    static Stream<Arguments> inserts() {
        return Stream.of(
                c("insertWithoutIdRoutesToFastTier", Kind.INSERT, ORDERS, "{" + HOT + "}", fast(Reason.INSERT_SERVER_ASSIGNS_ID)),
                c("insertWithHotObjectIdUnderIdPolicyRoutesToFastTier", Kind.INSERT, EVENTS, "{_id: " + oid(AFTER) + "}", fast(Reason.INSERT_ID_PROVABLY_HOT)),
                c("insertWithColdObjectIdUnderIdPolicyChecksTheArchiveFirst", Kind.INSERT, EVENTS, "{_id: " + oid(BEFORE) + "}",
                        point(objectId(BEFORE), Reason.INSERT_ID_MAY_BE_ARCHIVED)),
                c("insertWithStringIdUnderIdPolicyChecksTheArchiveFirst", Kind.INSERT, EVENTS, "{_id: 'e1'}", point(new BsonString("e1"), Reason.INSERT_ID_MAY_BE_ARCHIVED)),
                c("insertWithClientIdUnderDatePolicyChecksTheArchiveFirstEvenWhenHot", Kind.INSERT, ORDERS, "{_id: 'o1', " + HOT + "}",
                        point(O1, Reason.INSERT_ID_MAY_BE_ARCHIVED)),
                c("insertIntoUntieredNamespacePassesToArchive", Kind.INSERT, null, "{_id: 'o1'}", new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE)));
    }

    static Stream<Arguments> updates() {
        return Stream.of(
                c("pointUpdateByIdPromotesThenWritesInFastTier", Kind.UPDATE, ORDERS, "{q: {_id: 'o1'}, u: {$set: {s: 1}}}", point(O1, Reason.POINT_WRITE_BY_ID)),
                c("pointUpdateByIdWithExtraPredicateIsStillAPointWrite", Kind.UPDATE, ORDERS, "{q: {_id: 'o1', s: 0}, u: {$set: {s: 1}}}", point(O1, Reason.POINT_WRITE_BY_ID)),
                c("pointUpdateByIdInsideAndIsAPointWrite", Kind.UPDATE, ORDERS, "{q: {$and: [{s: 0}, {_id: {$eq: 'o1'}}]}, u: {$set: {s: 1}}}", point(O1, Reason.POINT_WRITE_BY_ID)),
                c("replaceByIdIsAPointWrite", Kind.UPDATE, ORDERS, "{q: {_id: 'o1'}, u: {s: 2}}", point(O1, Reason.POINT_WRITE_BY_ID)),
                c("provablyHotMultiUpdateRoutesToFastTier", Kind.UPDATE, ORDERS, "{q: {" + HOT + "}, u: {$inc: {n: 1}}, multi: true}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("provablyHotSingleUpdateRoutesToFastTier", Kind.UPDATE, ORDERS, "{q: {s: 0, " + HOT + "}, u: {$inc: {n: 1}}}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("provablyHotUpdateByIdNeedsNoPromotion", Kind.UPDATE, ORDERS, "{q: {_id: 'o1', " + HOT + "}, u: {$inc: {n: 1}}}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("multiUpdateNotProvablyHotAppliesToBothTiers", Kind.UPDATE, ORDERS, "{q: {s: 0}, u: {$set: {s: 1}}, multi: true}", both(false, Optional.empty())),
                c("multiUpdateBelowBoundAppliesToBothTiers", Kind.UPDATE, ORDERS, "{q: {" + COLD + "}, u: {$set: {s: 1}}, multi: true}", both(false, Optional.empty())),
                c("multiFlagWrittenAsNumberIsHonoured", Kind.UPDATE, ORDERS, "{q: {s: 0}, u: {$set: {s: 1}}, multi: 1}", both(false, Optional.empty())),
                c("singleUpdateNotProvablyHotResolvesItsTargetFirst", Kind.UPDATE, ORDERS, "{q: {s: 0}, u: {$set: {s: 1}}}", resolve("{s: 0}", "{}", false, Optional.empty())),
                c("singleUpdateWithSortResolvesByThatSort", Kind.UPDATE, ORDERS, "{q: {s: 0}, u: {$set: {s: 1}}, sort: {n: -1}}", resolve("{s: 0}", "{n: -1}", false, Optional.empty())),
                c("upsertByIdPromotesFirstSoItCannotDuplicateAnArchivedDocument", Kind.UPDATE, ORDERS, "{q: {_id: 'o1'}, u: {$set: {s: 1}}, upsert: true}",
                        point(O1, Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("upsertByIdPromotesFirstEvenWhenFilterIsHot", Kind.UPDATE, ORDERS, "{q: {_id: 'o1', " + HOT + "}, u: {$set: {s: 1}}, upsert: true}",
                        point(O1, Reason.UPSERT_WITH_EXPLICIT_ID)),
                // the server derives the new document's _id from a one-clause $or and a one-element $in as from an equality
                c("hotUpsertByIdInOneClauseOrPromotesThatIdFirst", Kind.UPDATE, ORDERS,
                        "{q: {$or: [{_id: 'o1'}], " + HOT + "}, u: {$set: {s: 1}}, upsert: true}", point(O1, Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("hotUpsertByOneElementInPromotesThatIdFirst", Kind.UPDATE, ORDERS,
                        "{q: {_id: {$in: ['o1']}, " + HOT + "}, u: {$set: {s: 1}}, upsert: true}", point(O1, Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("hotUpsertByOneElementInInsideOneClauseOrInsideAndPromotesThatIdFirst", Kind.UPDATE, ORDERS,
                        "{q: {$and: [{$or: [{_id: {$in: ['o1']}}]}, {" + HOT + "}]}, u: {$set: {s: 1}}, upsert: true}",
                        point(O1, Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("pointUpdateByOneElementInIsAPointWrite", Kind.UPDATE, ORDERS, "{q: {_id: {$in: ['o1']}}, u: {$set: {s: 1}}}",
                        point(O1, Reason.POINT_WRITE_BY_ID)),
                c("hotUpsertByTwoClauseOrPinsNoIdAndRoutesToFastTier", Kind.UPDATE, ORDERS,
                        "{q: {$or: [{_id: 'o1'}, {_id: 'o2'}], " + HOT + "}, u: {$set: {s: 1}}, upsert: true}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("hotUpsertByTwoElementInPinsNoIdAndRoutesToFastTier", Kind.UPDATE, ORDERS,
                        "{q: {_id: {$in: ['o1', 'o2']}, " + HOT + "}, u: {$set: {s: 1}}, upsert: true}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("oneElementInOfARegexPinsNoId", Kind.UPDATE, ORDERS,
                        "{q: {_id: {$in: [/^o/]}, " + HOT + "}, u: {$set: {s: 1}}, upsert: true}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("hotUpsertWithoutExplicitIdRoutesToFastTier", Kind.UPDATE, ORDERS, "{q: {sku: 'x', " + HOT + "}, u: {$set: {s: 1}}, upsert: true}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("hotUpsertOfReplacementWithIdPromotesThatId", Kind.UPDATE, ORDERS, "{q: {" + HOT + "}, u: {_id: 'n1', s: 1}, upsert: true}",
                        point(new BsonString("n1"), Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("hotUpsertWithSetOnInsertIdPromotesThatId", Kind.UPDATE, ORDERS, "{q: {" + HOT + "}, u: {$setOnInsert: {_id: 'n2'}}, upsert: true}",
                        point(new BsonString("n2"), Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("hotUpsertWithSetIdPromotesThatId", Kind.UPDATE, ORDERS, "{q: {" + HOT + "}, u: {$set: {_id: 'n3'}}, upsert: true}",
                        point(new BsonString("n3"), Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("coldSingleUpsertResolvesThenUpserts", Kind.UPDATE, ORDERS, "{q: {sku: 'x'}, u: {$set: {s: 1}}, upsert: true}", resolve("{sku: 'x'}", "{}", true, Optional.empty())),
                c("coldSingleUpsertCarriesTheIdItWouldCreate", Kind.UPDATE, ORDERS, "{q: {sku: 'x'}, u: {$setOnInsert: {_id: 'n4'}}, upsert: true}",
                        resolve("{sku: 'x'}", "{}", true, Optional.of(new BsonString("n4")))),
                c("coldMultiUpsertAppliesToBothTiersThenUpsertsOnFastTier", Kind.UPDATE, ORDERS, "{q: {sku: 'x'}, u: {$set: {s: 1}}, upsert: true, multi: true}",
                        both(true, Optional.empty())),
                c("stringIdUnderCaseInsensitiveCollationIsNotAPointWrite", Kind.UPDATE, ORDERS,
                        "{q: {_id: 'o1'}, u: {$set: {s: 1}}, collation: {locale: 'en', strength: 2}}", resolve("{_id: 'o1'}", "{}", false, Optional.empty())),
                c("numericIdUnderCaseInsensitiveCollationIsStillAPointWrite", Kind.UPDATE, ORDERS,
                        "{q: {_id: 7}, u: {$set: {s: 1}}, collation: {locale: 'en', strength: 2}}", point(new BsonInt32(7), Reason.POINT_WRITE_BY_ID)),
                c("upsertOfStringIdUnderCaseInsensitiveCollationResolvesAndCarriesTheIdItWouldCreate", Kind.UPDATE, ORDERS,
                        "{q: {_id: 'o1'}, u: {$set: {s: 1}}, upsert: true, collation: {locale: 'en', strength: 2}}", resolve("{_id: 'o1'}", "{}", true, Optional.of(O1))),
                c("hotUpsertOfStringIdUnderCaseInsensitiveCollationPromotesThatIdFirst", Kind.UPDATE, ORDERS,
                        "{q: {_id: 'o1', " + HOT + "}, u: {$set: {s: 1}}, upsert: true, collation: {locale: 'en', strength: 2}}", point(O1, Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("simpleCollationKeepsAStringIdPointWrite", Kind.UPDATE, ORDERS,
                        "{q: {_id: 'o1'}, u: {$set: {s: 1}}, collation: {locale: 'simple'}}", point(O1, Reason.POINT_WRITE_BY_ID)),
                c("updateOnUntieredNamespacePassesToArchive", Kind.UPDATE, null, "{q: {s: 0}, u: {$set: {s: 1}}, multi: true}", new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE)),
                arguments("hotLookingUpdateAppliesToBothTiersWhenNothingIsCovered", Kind.UPDATE, ORDERS, "{q: {" + HOT + "}, u: {$set: {s: 1}}, multi: true}",
                        CoverageBound.nothing(), both(false, Optional.empty())));
    }

    static Stream<Arguments> deletes() {
        return Stream.of(
                c("pointDeleteByIdPromotesThenDeletesSoTheArchiveCopyGoesToo", Kind.DELETE, ORDERS, "{q: {_id: 'o1'}, limit: 1}", point(O1, Reason.POINT_WRITE_BY_ID)),
                c("deleteManyByIdIsAPointWrite", Kind.DELETE, ORDERS, "{q: {_id: 'o1'}, limit: 0}", point(O1, Reason.POINT_WRITE_BY_ID)),
                c("provablyHotDeleteManyRoutesToFastTier", Kind.DELETE, ORDERS, "{q: {" + HOT + "}, limit: 0}", fast(Reason.PROVABLY_HOT_WRITE)),
                c("deleteManyNotProvablyHotAppliesToBothTiers", Kind.DELETE, ORDERS, "{q: {s: 'x'}, limit: 0}", both(false, Optional.empty())),
                c("deleteManyBelowBoundAppliesToBothTiers", Kind.DELETE, ORDERS, "{q: {" + COLD + "}, limit: 0}", both(false, Optional.empty())),
                c("deleteOneNotProvablyHotResolvesItsTargetFirst", Kind.DELETE, ORDERS, "{q: {s: 'x'}, limit: 1}", resolve("{s: 'x'}", "{}", false, Optional.empty())),
                c("deleteOnUntieredNamespacePassesToArchive", Kind.DELETE, null, "{q: {}, limit: 0}", new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE)));
    }

    static Stream<Arguments> findAndModifies() {
        return Stream.of(
                c("findAndModifyByIdIsAPointWrite", Kind.FIND_AND_MODIFY, ORDERS, "{findAndModify: 'orders', query: {_id: 'o1'}, update: {$inc: {n: 1}}}",
                        point(O1, Reason.POINT_WRITE_BY_ID)),
                c("findAndModifyWithHotQueryRoutesToFastTier", Kind.FIND_AND_MODIFY, ORDERS, "{findAndModify: 'orders', query: {" + HOT + "}, sort: {createdAt: 1}, remove: true}",
                        fast(Reason.PROVABLY_HOT_WRITE)),
                c("findAndModifyWithColdQueryResolvesByItsSort", Kind.FIND_AND_MODIFY, ORDERS, "{findAndModify: 'orders', query: {s: 0}, sort: {createdAt: 1}, remove: true}",
                        resolve("{s: 0}", "{createdAt: 1}", false, Optional.empty())),
                c("findAndModifyUpsertByIdPromotesFirst", Kind.FIND_AND_MODIFY, ORDERS, "{findAndModify: 'orders', query: {_id: 'o1'}, update: {$set: {s: 1}}, upsert: true}",
                        point(O1, Reason.UPSERT_WITH_EXPLICIT_ID)),
                c("findAndModifyRemoveIgnoresUpsertFlag", Kind.FIND_AND_MODIFY, ORDERS, "{findAndModify: 'orders', query: {_id: 'o1'}, remove: true, upsert: true}",
                        point(O1, Reason.POINT_WRITE_BY_ID)),
                c("findAndModifyColdUpsertResolvesThenUpserts", Kind.FIND_AND_MODIFY, ORDERS, "{findAndModify: 'orders', query: {sku: 'x'}, update: {$set: {s: 1}}, upsert: true}",
                        resolve("{sku: 'x'}", "{}", true, Optional.empty())),
                c("findAndModifyOnUntieredNamespacePassesToArchive", Kind.FIND_AND_MODIFY, null, "{findAndModify: 'x', query: {}, remove: true}",
                        new WriteRoute.Archive(Reason.UNTIERED_NAMESPACE)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource({"inserts", "updates", "deletes", "findAndModifies"})
    void routes(String name, Kind kind, CollectionPolicy policy, String statement, CoverageBound bound, WriteRoute expected) {
        BsonDocument s = doc(statement);
        WriteRoute actual = switch (kind) {
            case INSERT -> WriteRouter.insert(s, policy, bound);
            case UPDATE -> WriteRouter.update(s, policy, bound);
            case DELETE -> WriteRouter.delete(s, policy, bound);
            case FIND_AND_MODIFY -> WriteRouter.findAndModify(s, policy, bound);
        };
        assertThat(actual).isEqualTo(expected);
    }
}
