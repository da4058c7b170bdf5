package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.CoverageBound;
import io.thermocline.tiering.state.TieringState;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonDocument;

/**
 * What routing needs to know about namespaces ({@code db.coll}): which are tiered, with which
 * policy, and what the fast tier currently covers. Immutable; the proxy swaps in a new table when
 * the shared tiering state changes.
 */
public record RoutingTable(Map<String, CollectionPolicy> policies, TieringState state) {

    public RoutingTable {
        policies = Map.copyOf(Objects.requireNonNull(policies, "policies"));
        Objects.requireNonNull(state, "state");
    }

    public static RoutingTable of(List<CollectionPolicy> policies, TieringState state) {
        Map<String, CollectionPolicy> byNamespace = new HashMap<>();
        for (CollectionPolicy policy : policies) {
            byNamespace.put(policy.namespace(), policy);
        }
        return new RoutingTable(byNamespace, state);
    }

    /** A table with no tiered namespace: the proxy is a pure pass-through to the archive. */
    public static RoutingTable passThrough() {
        return new RoutingTable(Map.of(), TieringState.initial());
    }

    public RoutingTable withState(TieringState next) {
        return new RoutingTable(policies, next);
    }

    public Optional<CollectionPolicy> policy(String namespace) {
        return Optional.ofNullable(policies.get(namespace));
    }

    public boolean tiered(String namespace) {
        return policies.containsKey(namespace);
    }

    public CoverageBound coverage(String namespace) {
        return state.coverage(namespace);
    }

    /** True when some tiered collection lives in {@code database}; null means any database. */
    public boolean hasTieredCollectionIn(String database) {
        return policies.values().stream().anyMatch(p -> database == null || p.database().equals(database));
    }

    /** Routes a filtered read on {@code namespace} with the namespace's policy and bound. */
    public ReadRoute routeRead(String namespace, BsonDocument filter) {
        return ReadRouter.route(filter, policies.get(namespace), coverage(namespace));
    }
}
