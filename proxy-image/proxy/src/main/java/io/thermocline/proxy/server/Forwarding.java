package io.thermocline.proxy.server;

import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.gateway.Backends;
import io.thermocline.proxy.gateway.ErrorMapping;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.proxy.session.TransactionPins;

/**
 * The round trip every handler shares, built once by the server: the forwarder over the tiers' pools, the
 * transaction pins it keeps, and the replies and error mapping back to the client. The server builds it before the
 * tiered layer, whose gateways go over the same forwarder.
 */
record Forwarding(ClientReplies replies, ErrorMapping errors, TransactionPins pins, Forwarder forwarder) {

    static Forwarding over(Backends backends, CursorRegistry cursors, ProxyMetrics metrics) {
        ClientReplies replies = new ClientReplies(metrics);
        ErrorMapping errors = new ErrorMapping(replies, ErrorMapping.tierNamedBy(backends));
        TransactionPins pins = new TransactionPins();
        return new Forwarding(replies, errors, pins, new Forwarder(backends, pins, cursors, metrics));
    }
}
