package io.thermocline.proxy.tiered.writes;

import io.thermocline.proxy.routing.Reason;
import io.thermocline.proxy.routing.WriteRoute;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics.Served;

/** Counts each write's routing decision in the proxy's routing metrics. */
final class RouteCounter {

    private final RoutingMetrics metrics;

    RouteCounter(RoutingMetrics metrics) {
        this.metrics = metrics;
    }

    void decided(Served served, Reason reason) {
        metrics.decided("write", served, reason);
    }

    void count(WriteRoute route) {
        Served served = route instanceof WriteRoute.FastTier || route instanceof WriteRoute.PointWrite
                ? Served.FAST
                : route instanceof WriteRoute.Archive ? Served.ARCHIVE : Served.BOTH;
        decided(served, route.reason());
    }
}
