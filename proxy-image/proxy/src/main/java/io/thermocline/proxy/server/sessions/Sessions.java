package io.thermocline.proxy.server.sessions;

import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.cursor.CursorOwner;
import io.thermocline.proxy.cursor.CursorRoute;
import io.thermocline.proxy.server.cursors.OrphanCursors;
import io.thermocline.proxy.server.forwarding.PassThrough;
import io.thermocline.proxy.session.SessionKey;
import io.thermocline.proxy.session.SessionUsage;
import io.thermocline.proxy.session.TransactionPins;
import org.bson.BsonValue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Logical sessions as the proxy follows them: which connections use each, and what ends one
 * (endSessions, or the last connection that used it closing): its transaction pin is released and
 * its cursors are killed.
 */
public final class Sessions {
    private final SessionUsage usage = new SessionUsage();
    private final TransactionPins pins;
    private final OrphanCursors orphans;
    private final PassThrough passThrough;

    public Sessions(TransactionPins pins, OrphanCursors orphans, PassThrough passThrough) {
        this.pins = pins;
        this.orphans = orphans;
        this.passThrough = passThrough;
    }

    /** Notes the session a request runs in, on the connection it came on. */
    public void used(Request request) {
        request.traits().session().ifPresent(s -> usage.used(s, request.connectionId()));
    }

    /** endSessions goes to the archive as sent; then the proxy forgets the sessions' pins and kills their cursors. */
    public CompletableFuture<Void> endSessions(Request request) {
        return passThrough.handle(request).whenComplete((v, e) -> ended(request.msg().body().get("endSessions")));
    }

    private void ended(BsonValue ended) {
        if (ended == null || !ended.isArray()) {
            return;
        }
        for (BsonValue lsid : ended.asArray()) {
            if (lsid.isDocument() && lsid.asDocument().get("id") != null) {
                SessionKey key = new SessionKey(lsid.asDocument().get("id"));
                usage.ended(key);
                pins.release(key);
                orphans.kill(orphans.registry().removeOwnedBy(new CursorOwner.Session(key)));
            }
        }
    }

    /** A client connection closed: kill the cursors nobody can continue any more. */
    public void connectionClosed(long connectionId) {
        List<CursorRoute> orphaned = new ArrayList<>(orphans.registry().removeOwnedBy(new CursorOwner.Connection(connectionId)));
        for (SessionKey abandoned : usage.connectionClosed(connectionId)) {
            pins.release(abandoned);
            orphaned.addAll(orphans.registry().removeOwnedBy(new CursorOwner.Session(abandoned)));
        }
        orphans.kill(orphaned);
    }
}
