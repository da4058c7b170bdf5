package io.thermocline.proxy.server.cursors;

import io.thermocline.proxy.cursor.CursorRegistry;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cursors nobody can continue any more (their connection or session is gone, or they sat idle
 * past the members' own timeout) are killed on their member, so the member frees them now.
 * The fleet's forwarding of another replica's cursors will plug in here and in {@link GetMore}.
 */
public final class OrphanCursors {
    private static final Logger LOG = LoggerFactory.getLogger(OrphanCursors.class);

    private final CursorRegistry cursors;
    private final Forwarder forwarder;
    private final ProxyMetrics metrics;

    public OrphanCursors(CursorRegistry cursors, Forwarder forwarder, ProxyMetrics metrics) {
        this.cursors = cursors;
        this.forwarder = forwarder;
        this.metrics = metrics;
    }

    public CursorRegistry registry() {
        return cursors;
    }

    /** Kills each cursor on its member (already removed from the table); the outcome is only logged. */
    public void kill(List<CursorRoute> routes) {
        if (routes.isEmpty()) {
            return;
        }
        metrics.openCursors(cursors.size());
        for (CursorRoute r : routes) {
            forwarder
                    .killOnMember(r)
                    .whenComplete((reply, e) -> LOG.info(
                            "event=orphan_cursor_killed tier={} member={} ns={} ok={}",
                            r.tier().label(),
                            r.member(),
                            r.namespace(),
                            e == null && OpMsg.isOk(reply.body())));
        }
    }

    /** Drops mappings of cursors idle past {@code idle} and kills them on their member in case they survive. */
    public void sweepIdle(Duration idle) {
        List<CursorRoute> idleCursors = cursors.removeIdle(idle.toNanos(), System.nanoTime());
        if (!idleCursors.isEmpty()) {
            LOG.info("event=idle_cursors_swept count={}", idleCursors.size());
            kill(idleCursors);
        }
    }
}
