package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.AgeValue;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.state.TieringState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.bson.BsonDocument;

/** Policies, instants and a routing table shared by the routing tables of cases. */
final class RoutingFixtures {

    static final CollectionPolicy ORDERS = new CollectionPolicy("shop", "orders", "createdAt", Duration.ofDays(30));
    static final CollectionPolicy EVENTS = new CollectionPolicy("shop", "events", "_id", Duration.ofDays(30));
    static final CollectionPolicy AUDIT = new CollectionPolicy("shop", "audit", "meta.ts", Duration.ofDays(30));
    static final CollectionPolicy METRICS = new CollectionPolicy("ops", "metrics", "at", Duration.ofDays(7));

    /** The coverage bound every test uses: the fast tier holds everything from 1 March 2026 on. */
    static final Instant C = Instant.parse("2026-03-01T00:00:00Z");
    static final CoverageBound BOUND = CoverageBound.from(C);

    static final String BEFORE = "2026-02-01T00:00:00Z";
    static final String AT = "2026-03-01T00:00:00Z";
    static final String AFTER = "2026-03-15T00:00:00Z";
    static final String LATER = "2026-04-01T00:00:00Z";

    /** shop.orders, shop.events, shop.audit covered from C; ops.metrics tiered but nothing covered. */
    static final RoutingTable TABLE = RoutingTable.of(List.of(ORDERS, EVENTS, AUDIT, METRICS), TieringState.initial()
            .withCoverage(ORDERS.namespace(), BOUND)
            .withCoverage(EVENTS.namespace(), BOUND)
            .withCoverage(AUDIT.namespace(), BOUND));

    private RoutingFixtures() {
    }

    static BsonDocument doc(String json) {
        return json == null ? null : BsonDocument.parse(json);
    }

    /** Extended JSON for a Date. */
    static String date(String iso) {
        return "{$date: '" + iso + "'}";
    }

    /** Extended JSON for the first ObjectId of the second {@code iso} names. */
    static String oid(String iso) {
        return "{$oid: '" + AgeValue.smallestObjectIdOfSecond(Instant.parse(iso).getEpochSecond()).toHexString() + "'}";
    }

    static long millis(String iso) {
        return Instant.parse(iso).toEpochMilli();
    }
}
