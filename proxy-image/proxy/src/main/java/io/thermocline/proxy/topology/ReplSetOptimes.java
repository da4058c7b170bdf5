package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The applied optimes {@code replSetGetStatus} reports for a replica set's members. On the primary these
 * are what each secondary last reported having applied (replication's position updates, sent as it
 * applies), so each is a lower bound of what that member holds: one round trip refreshes every member.
 */
public final class ReplSetOptimes {
    private ReplSetOptimes() {
    }

    /** Member address to applied optime, for the members that are up and report one. */
    public static Map<ServerAddress, BsonTimestamp> applied(BsonDocument status) {
        Map<ServerAddress, BsonTimestamp> out = new LinkedHashMap<>();
        BsonValue members = status.get("members");
        if (members == null || !members.isArray()) {
            return out;
        }
        for (BsonValue m : members.asArray()) {
            if (!m.isDocument()) {
                continue;
            }
            BsonDocument member = m.asDocument();
            BsonValue name = member.get("name");
            BsonValue health = member.get("health");
            BsonTimestamp optime = optime(member.get("optime"));
            if (name == null || !name.isString() || optime == null || health == null || !health.isNumber()
                    || health.asNumber().doubleValue() != 1.0) {
                continue;
            }
            out.put(new ServerAddress(name.asString().getValue()), optime);
        }
        return out;
    }

    /** {@code {ts, t}} (protocol version 1) or a bare timestamp (the old protocol). */
    private static BsonTimestamp optime(BsonValue v) {
        if (v == null) {
            return null;
        }
        if (v.isTimestamp()) {
            return v.asTimestamp();
        }
        BsonValue ts = v.isDocument() ? v.asDocument().get("ts") : null;
        if (ts != null && ts.isTimestamp()) {
            return ts.asTimestamp();
        }
        return null;
    }
}
