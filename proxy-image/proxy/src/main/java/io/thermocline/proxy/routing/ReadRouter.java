package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Instant;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Routes a filtered read (find, count, distinct, findAndModify's query) on one namespace:
 * the fast tier only when {@link AgeProof} proves {@code ageField >= X} with {@code X} covered.
 */
public final class ReadRouter {

    private ReadRouter() {
    }

    /**
     * @param filter the query filter (null = match everything)
     * @param policy the namespace's policy, null when the namespace is not tiered
     * @param bound  the namespace's coverage bound, null when unknown (treated as nothing covered)
     */
    public static ReadRoute route(BsonDocument filter, CollectionPolicy policy, CoverageBound bound) {
        return route(filter, policy, bound, null);
    }

    /**
     * As {@link #route(BsonDocument, CollectionPolicy, CoverageBound)}, for a read with an explicit
     * {@code collation}: a string {@code _id} under a non-simple collation is not a point read.
     */
    public static ReadRoute route(BsonDocument filter, CollectionPolicy policy, CoverageBound bound, BsonDocument collation) {
        if (policy == null) {
            return new ReadRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        CoverageBound coverage = bound == null ? CoverageBound.nothing() : bound;
        Optional<Instant> proven = AgeProof.lowerBound(filter, policy);
        if (proven.isPresent() && coverage.covers(proven.get())) {
            return new ReadRoute.FastTier(Reason.AGE_BOUND_COVERED);
        }
        Optional<BsonValue> pointId = AgeProof.pureIdEquality(filter).filter(id -> Collations.pinsOneValue(id, collation));
        if (pointId.isPresent()) {
            return new ReadRoute.PointReadFastFirst(pointId.get(), Reason.POINT_READ_BY_ID);
        }
        if (proven.isEmpty()) {
            return new ReadRoute.Archive(Reason.NO_AGE_BOUND);
        }
        return new ReadRoute.Archive(coverage instanceof CoverageBound.Nothing ? Reason.NOTHING_COVERED : Reason.AGE_BOUND_BELOW_COVERAGE);
    }
}
