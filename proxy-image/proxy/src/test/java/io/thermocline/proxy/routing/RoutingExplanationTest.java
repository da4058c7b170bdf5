package io.thermocline.proxy.routing;

import static io.thermocline.proxy.routing.RoutingFixtures.AFTER;
import static io.thermocline.proxy.routing.RoutingFixtures.BEFORE;
import static io.thermocline.proxy.routing.RoutingFixtures.TABLE;
import static io.thermocline.proxy.routing.RoutingFixtures.date;
import static io.thermocline.proxy.routing.RoutingFixtures.doc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.thermocline.proxy.routing.RoutingExplanation.Served;
import java.time.Instant;
import java.util.Arrays;
import java.util.stream.Stream;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class RoutingExplanationTest {

    static final String HOT = "createdAt: {$gte: " + date(AFTER) + "}";
    static final String COVERAGE = "fast tier covers age >= 2026-03-01T00:00:00Z";

    static Arguments c(String name, String command, Served served, Reason reason, String provenIso, String coverage) {
        return arguments(name, "shop", command, served, reason, provenIso, coverage);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                c("explainOfHotFindSaysFastTierWithItsProofAndCoverage", "{explain: {find: 'orders', filter: {" + HOT + "}}}",
                        Served.FAST_TIER, Reason.AGE_BOUND_COVERED, AFTER, COVERAGE),
                c("explainOfColdFindSaysArchiveAndShowsTheWeakerProof", "{explain: {find: 'orders', filter: {createdAt: {$gt: " + date(BEFORE) + "}}}}",
                        Served.ARCHIVE, Reason.AGE_BOUND_BELOW_COVERAGE, BEFORE, COVERAGE),
                c("explainOfUnprovenCountSaysArchive", "{explain: {count: 'orders', query: {s: 1}}}", Served.ARCHIVE, Reason.NO_AGE_BOUND, null, COVERAGE),
                c("explainOfPointReadSaysFastTierThenArchive", "{explain: {find: 'orders', filter: {_id: 'o1'}}}",
                        Served.FAST_TIER_THEN_ARCHIVE, Reason.POINT_READ_BY_ID, null, COVERAGE),
                c("explainOfUntieredFindSaysArchiveWithoutCoverage", "{explain: {find: 'customers'}}", Served.ARCHIVE, Reason.UNTIERED_NAMESPACE, null, null),
                c("explainOfHotAggregateShowsTheLeadingMatchProof", "{explain: {aggregate: 'orders', pipeline: [{$match: {" + HOT + "}}], cursor: {}}}",
                        Served.FAST_TIER, Reason.AGE_BOUND_COVERED, AFTER, COVERAGE),
                c("explainOfAggregateIntoTieredNamespaceSaysRefused", "{explain: {aggregate: 'customers', pipeline: [{$out: 'orders'}], cursor: {}}}",
                        Served.REFUSED, Reason.OUTPUT_TO_TIERED_NAMESPACE, null, null),
                c("explainOfColdSingleUpdateSaysResolveThenFastTier", "{explain: {update: 'orders', updates: [{q: {s: 0}, u: {$set: {s: 1}}}]}}",
                        Served.RESOLVE_THEN_FAST_TIER, Reason.SINGLE_WRITE_NOT_PROVABLY_HOT, null, COVERAGE),
                c("explainOfColdMultiDeleteSaysBothTiers", "{explain: {delete: 'orders', deletes: [{q: {s: 0}, limit: 0}]}}",
                        Served.BOTH_TIERS, Reason.MULTI_WRITE_NOT_PROVABLY_HOT, null, COVERAGE),
                c("explainOfPointDeleteSaysPromoteThenFastTier", "{explain: {delete: 'orders', deletes: [{q: {_id: 'o1'}, limit: 1}]}}",
                        Served.PROMOTE_THEN_FAST_TIER, Reason.POINT_WRITE_BY_ID, null, COVERAGE),
                c("explainOfHotFindAndModifyShowsItsQueryProof", "{explain: {findAndModify: 'orders', query: {" + HOT + "}, remove: true}}",
                        Served.FAST_TIER, Reason.PROVABLY_HOT_WRITE, AFTER, COVERAGE),
                c("helloIsExplainedAsAnsweredByTheProxy", "{hello: 1}", Served.PROXY, Reason.ANSWERED_BY_PROXY, null, null),
                c("serverStatusIsExplainedAsBothTiers", "{serverStatus: 1}", Served.BOTH_TIERS, Reason.ADMIN_OVER_BOTH_TIERS, null, null),
                c("currentOpIsExplainedAsBothTiers", "{currentOp: 1}", Served.BOTH_TIERS, Reason.ADMIN_OVER_BOTH_TIERS, null, null),
                c("hostInfoIsExplainedAsArchive", "{hostInfo: 1}", Served.ARCHIVE, Reason.ADMIN_ON_ARCHIVE, null, null),
                c("getMoreIsExplainedAsCursorOwner", "{getMore: {$numberLong: '3'}, collection: 'orders'}", Served.CURSOR_OWNER, Reason.CURSOR_OWNER, null, null),
                c("endSessionsIsExplainedAsBothTiers", "{endSessions: []}", Served.BOTH_TIERS, Reason.SESSION_COMMAND, null, null),
                c("ddlOnTieredNamespaceIsExplainedAsBothTiers", "{createIndexes: 'orders', indexes: []}", Served.BOTH_TIERS, Reason.DDL_ON_TIERED_NAMESPACE, null, null),
                c("commitIsExplainedAsTheTransactionTier", "{commitTransaction: 1}", Served.TRANSACTION_TIER, Reason.TRANSACTION_PINNED_TIER, null, null),
                arguments("renameOfTieredNamespaceIsExplainedAsRefused", "admin", "{renameCollection: 'shop.orders', to: 'shop.x'}",
                        Served.REFUSED, Reason.RENAME_OF_TIERED_NAMESPACE, null, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void explains(String name, String database, String command, Served served, Reason reason, String provenIso, String coverage) {
        RoutingExplanation explanation = RoutingExplanation.of(CommandClassifier.classify(doc(command), database, TABLE), TABLE);
        assertThat(explanation.served()).isEqualTo(served);
        assertThat(explanation.reason()).isEqualTo(reason);
        assertThat(explanation.provenAgeBound()).isEqualTo(provenIso == null ? null : Instant.parse(provenIso));
        assertThat(explanation.coverage()).isEqualTo(coverage);
        assertThat(explanation.detail()).isNotBlank();

        BsonDocument bson = explanation.toBsonDocument();
        assertThat(bson.getString("tier").getValue()).isEqualTo(served.label());
        assertThat(bson.getString("reason").getValue()).isEqualTo(reason.label());
        assertThat(bson.get("provenAgeBound")).isEqualTo(provenIso == null ? null : new BsonDateTime(Instant.parse(provenIso).toEpochMilli()));
    }

    @Test
    void aWriteWithoutAnAgeBoundSaysWhyItIsSlowAndHowToBoundIt() {
        for (String command : new String[] {"{explain: {delete: 'orders', deletes: [{q: {s: 0}, limit: 0}]}}",
                "{explain: {update: 'orders', updates: [{q: {s: 0}, u: {$set: {s: 1}}}]}}"}) {
            String detail = RoutingExplanation.of(CommandClassifier.classify(doc(command), "shop", TABLE), TABLE).detail();
            assertThat(detail).as(command).contains("slower than on the replica set alone").contains("sync barrier")
                    .contains("bound createdAt from below");
        }
        String hot = RoutingExplanation.of(CommandClassifier.classify(doc("{explain: {delete: 'orders', deletes: [{q: {" + HOT + "}, limit: 0}]}}"),
                "shop", TABLE), TABLE).detail();
        assertThat(hot).doesNotContain("slower");
    }

    @Test
    void refusedExplanationCarriesTheRefusalMessage() {
        RoutingExplanation explanation = RoutingExplanation.of(
                CommandClassifier.classify(doc("{aggregate: 'customers', pipeline: [{$out: 'orders'}], cursor: {}}"), "shop", TABLE), TABLE);
        assertThat(explanation.detail()).contains("shop.orders").contains("untiered collection");
    }

    @Test
    void everyReasonHasItsOwnSentenceAndLabel() {
        assertThat(Arrays.stream(Reason.values()).map(RoutingExplanation::sentence)).doesNotHaveDuplicates().allMatch(s -> !s.isBlank());
        assertThat(Arrays.stream(Reason.values()).map(Reason::label)).doesNotHaveDuplicates().allMatch(l -> l.matches("[a-z]+(_[a-z]+)*"));
    }
}
