package io.thermocline.operator.tiering;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/** Which unique indexes the proxy cannot hold across the tiers (it enforces the fast tier's against both). */
class UniqueIndexCoverageTest {

    private static final Document ID = new Document("name", "_id_").append("key", new Document("_id", 1));
    private static final Document EMAIL = unique("email_1", new Document("email", 1));

    private static Document unique(String name, Document key) {
        return new Document("name", name).append("key", key).append("unique", true);
    }

    @Test
    void anIndexOnBothTiersHoldsAcrossThem() {
        assertThat(UniqueIndexCoverage.gaps("shop.orders", List.of(ID, EMAIL), List.of(ID, EMAIL))).isEmpty();
        // the same fields in another order or direction are the same constraint
        assertThat(UniqueIndexCoverage.gaps("shop.orders",
                List.of(unique("a_1_b_1", new Document("a", 1).append("b", 1))),
                List.of(unique("b_-1_a_1", new Document("b", -1).append("a", 1))))).isEmpty();
    }

    @Test
    void anIndexOnlyTheArchiveHasIsNotEnforcedByTheProxy() {
        assertThat(UniqueIndexCoverage.gaps("shop.orders", List.of(ID), List.of(ID, EMAIL))).singleElement().asString()
                .startsWith("unique index shop.orders: email_1 exists only in the archive")
                .contains("dead-letters").doesNotContain("per tier only");
    }

    @Test
    void anIndexOnlyTheFastTierHasIsEnforcedWithAnUnindexedArchiveLookUp() {
        assertThat(UniqueIndexCoverage.gaps("shop.orders", List.of(ID, EMAIL), List.of(ID))).singleElement().asString()
                .startsWith("unique index shop.orders: email_1 exists only in the fast tier: it is enforced across tiers");
    }

    @Test
    void aCollationIsComparedSimplyAcrossTiers() {
        Document collated = unique("name_1", new Document("name", 1)).append("collation", new Document("locale", "en").append("strength", 2));
        assertThat(UniqueIndexCoverage.gaps("shop.users", List.of(collated), List.of(collated))).singleElement().asString()
                .contains("has a collation");
    }

    @Test
    void nonUniqueIndexesAndTheIdIndexAreNoGap() {
        Document plain = new Document("name", "sku_1").append("key", new Document("sku", 1));
        assertThat(UniqueIndexCoverage.gaps("shop.orders", List.of(ID), List.of(ID, plain))).isEmpty();
    }
}
