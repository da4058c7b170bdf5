package io.thermocline.proxy.routing;

import static io.thermocline.proxy.routing.RoutingFixtures.AFTER;
import static io.thermocline.proxy.routing.RoutingFixtures.BEFORE;
import static io.thermocline.proxy.routing.RoutingFixtures.TABLE;
import static io.thermocline.proxy.routing.RoutingFixtures.date;
import static io.thermocline.proxy.routing.RoutingFixtures.doc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TransactionRouterTest {

    static final String HOT = "createdAt: {$gte: " + date(AFTER) + "}";

    static Arguments c(String name, String command, TransactionTier pinned, TransactionRoute expected) {
        return arguments(name, command, pinned, expected);
    }

    static TransactionRoute run(TransactionTier tier, Reason reason) {
        return new TransactionRoute.Run(tier, reason);
    }

    static TransactionRoute promote(Reason reason, String... ids) {
        return new TransactionRoute.PromoteThenRun(Stream.of(ids).<BsonValue>map(BsonString::new).toList(), reason);
    }

    /** A refusal: the reason, and a fragment its message must contain. */
    static TransactionRoute refused(Reason reason, String mentions) {
        return new TransactionRoute.Refused(reason, mentions);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                c("hotFindRunsOnFastTier", "{find: 'orders', filter: {" + HOT + "}}", null, run(TransactionTier.FAST, Reason.AGE_BOUND_COVERED)),
                c("findNotProvablyHotIsRefusedNamingTheReasonAndTheAgeField", "{find: 'orders', filter: {s: 1}}", null,
                        refused(Reason.TRANSACTION_STATEMENT_NOT_PROVABLY_HOT, "no_age_bound; the fast tier covers age >= 2026-03-01T00:00:00Z). Filter on createdAt")),
                c("findBelowBoundIsRefused", "{find: 'orders', filter: {createdAt: {$gte: " + date(BEFORE) + "}}}", null,
                        refused(Reason.TRANSACTION_STATEMENT_NOT_PROVABLY_HOT, "age_bound_below_coverage")),
                c("pointReadByIdPromotesInsteadOfReadingTheArchiveOutsideTheSnapshot", "{find: 'orders', filter: {_id: 'o1'}}", null,
                        promote(Reason.POINT_READ_BY_ID, "o1")),
                c("findOnUntieredNamespaceRunsOnArchive", "{find: 'customers', filter: {}}", null, run(TransactionTier.ARCHIVE, Reason.UNTIERED_NAMESPACE)),
                c("insertWithoutIdRunsOnFastTier", "{insert: 'orders', documents: [{" + HOT + "}]}", null, run(TransactionTier.FAST, Reason.INSERT_SERVER_ASSIGNS_ID)),
                c("insertsWithIdsPromoteEachIdFirst", "{insert: 'orders', documents: [{_id: 'a'}, {_id: 'b'}]}", null,
                        promote(Reason.INSERT_ID_MAY_BE_ARCHIVED, "a", "b")),
                c("pointUpdatePromotesThenRunsOnFastTier", "{update: 'orders', updates: [{q: {_id: 'o1'}, u: {$set: {s: 1}}}]}", null,
                        promote(Reason.POINT_WRITE_BY_ID, "o1")),
                c("hotMultiUpdateRunsOnFastTier", "{update: 'orders', updates: [{q: {" + HOT + "}, u: {$set: {s: 1}}, multi: true}]}", null,
                        run(TransactionTier.FAST, Reason.PROVABLY_HOT_WRITE)),
                c("multiUpdateNotProvablyHotIsRefused", "{update: 'orders', updates: [{q: {s: 0}, u: {$set: {s: 1}}, multi: true}]}", null,
                        refused(Reason.TRANSACTION_STATEMENT_NOT_PROVABLY_HOT, "multi_write_not_provably_hot")),
                c("oneColdStatementAmongHotOnesRefusesTheCommand",
                        "{delete: 'orders', deletes: [{q: {" + HOT + "}, limit: 0}, {q: {s: 0}, limit: 1}]}", null,
                        refused(Reason.TRANSACTION_STATEMENT_NOT_PROVABLY_HOT, "single_write_not_provably_hot")),
                c("hotAggregateRunsOnFastTier", "{aggregate: 'orders', pipeline: [{$match: {" + HOT + "}}], cursor: {}}", null,
                        run(TransactionTier.FAST, Reason.AGE_BOUND_COVERED)),
                c("aggregateNotProvablyHotIsRefused", "{aggregate: 'orders', pipeline: [{$group: {_id: 1}}], cursor: {}}", null,
                        refused(Reason.TRANSACTION_STATEMENT_NOT_PROVABLY_HOT, "aggregate on shop.orders")),
                c("aggregateOnUntieredNamespaceRunsOnArchive", "{aggregate: 'customers', pipeline: [], cursor: {}}", null,
                        run(TransactionTier.ARCHIVE, Reason.UNTIERED_NAMESPACE)),
                c("aggregateWritingIntoTieredNamespaceIsRefused", "{aggregate: 'customers', pipeline: [{$merge: 'orders'}], cursor: {}}", null,
                        refused(Reason.OUTPUT_TO_TIERED_NAMESPACE, "shop.orders")),
                c("ddlOnTieredNamespaceIsRefused", "{createIndexes: 'orders', indexes: []}", null, refused(Reason.DDL_ON_TIERED_NAMESPACE, "outside the transaction")),
                c("ddlOnUntieredNamespaceRunsOnArchive", "{create: 'customers'}", null, run(TransactionTier.ARCHIVE, Reason.UNTIERED_NAMESPACE)),
                c("rejectedCommandIsRefusedWithItsMessage", "{bulkWrite: 1, ops: [], nsInfo: [{ns: 'shop.orders'}]}", null,
                        refused(Reason.UNKNOWN_COMMAND, "bulkWrite")),
                c("hotStatementInTransactionPinnedToArchiveIsRefusedAsSpanningTiers", "{find: 'orders', filter: {" + HOT + "}}", TransactionTier.ARCHIVE,
                        refused(Reason.TRANSACTION_SPANS_TIERS, "runs on the archive and its find needs the fast tier")),
                c("untieredStatementInTransactionPinnedToFastTierIsRefused", "{insert: 'customers', documents: [{}]}", TransactionTier.FAST,
                        refused(Reason.TRANSACTION_SPANS_TIERS, "runs on the fast tier and its insert needs the archive")),
                c("promotedStatementInTransactionPinnedToArchiveIsRefused", "{find: 'orders', filter: {_id: 'o1'}}", TransactionTier.ARCHIVE,
                        refused(Reason.TRANSACTION_SPANS_TIERS, "point_read_by_id")),
                c("hotStatementInTransactionPinnedToFastTierRuns", "{find: 'orders', filter: {" + HOT + "}}", TransactionTier.FAST,
                        run(TransactionTier.FAST, Reason.AGE_BOUND_COVERED)),
                c("commitRunsOnThePinnedTier", "{commitTransaction: 1}", TransactionTier.FAST, run(TransactionTier.FAST, Reason.TRANSACTION_PINNED_TIER)),
                c("abortOfAnEmptyTransactionGoesToArchive", "{abortTransaction: 1}", null, run(TransactionTier.ARCHIVE, Reason.TRANSACTION_PINNED_TIER)),
                c("getMoreInsideTransactionFollowsThePinnedTier", "{getMore: {$numberLong: '5'}, collection: 'orders'}", TransactionTier.FAST,
                        run(TransactionTier.FAST, Reason.CURSOR_OWNER)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void routes(String name, String command, TransactionTier pinned, TransactionRoute expected) {
        CommandClass statement = CommandClassifier.classify(doc(command), "shop", TABLE);
        TransactionRoute actual = TransactionRouter.route(statement, TABLE, pinned);
        if (expected instanceof TransactionRoute.Refused refused) {
            assertThat(actual).isInstanceOf(TransactionRoute.Refused.class);
            assertThat(actual.reason()).isEqualTo(refused.reason());
            assertThat(((TransactionRoute.Refused) actual).message()).contains(refused.message());
        } else {
            assertThat(actual).isEqualTo(expected);
        }
    }

    @Test
    void promotedIdsKeepStatementOrder() {
        CommandClass statement = CommandClassifier.classify(doc("{delete: 'orders', deletes: [{q: {_id: 'z'}, limit: 1}, {q: {_id: 'a'}, limit: 1}]}"), "shop", TABLE);
        assertThat(TransactionRouter.route(statement, TABLE, null))
                .isEqualTo(new TransactionRoute.PromoteThenRun(List.of(new BsonString("z"), new BsonString("a")), Reason.POINT_WRITE_BY_ID));
    }
}
