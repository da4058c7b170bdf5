package io.thermocline.proxy.cursor;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.security.UserName;
import org.bson.BsonDocument;

/**
 * Where a proxy cursor lives: the backend cursor on one member of one tier.
 *
 * @param namespace {@code db.collection} as the backend reported it
 * @param lsid      the session the cursor was opened in, as the backend knows it, or null
 * @param noTimeout opened with {@code noCursorTimeout}: never swept for idleness
 * @param creator   the user authenticated on the connection that opened it, or null: only that user may
 *                  continue it, as in mongod
 * @param clientLsid that session as the client named it (shown in refusals), or null
 */
public record CursorRoute(long proxyId, Tier tier, ServerAddress member, long backendId, String namespace,
                          BsonDocument lsid, CursorOwner owner, boolean noTimeout, UserName creator,
                          BsonDocument clientLsid) {

    public String database() {
        int dot = namespace.indexOf('.');
        return dot < 0 ? namespace : namespace.substring(0, dot);
    }

    public String collection() {
        int dot = namespace.indexOf('.');
        return dot < 0 ? "" : namespace.substring(dot + 1);
    }
}
