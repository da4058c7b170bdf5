package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

import java.util.ArrayList;
import java.util.List;

/** Turns a member's hello/isMaster reply into a {@link MemberDescription}. */
public final class HelloReplies {
    private static final int DEFAULT_MAX_BSON = 16 * 1024 * 1024;
    private static final int DEFAULT_MAX_MESSAGE = 48_000_000;
    private static final int DEFAULT_MAX_BATCH = 100_000;

    private HelloReplies() {
    }

    public static MemberDescription describe(ServerAddress address, BsonDocument reply, boolean helloSupported) {
        String setName = string(reply, "setName");
        boolean writable = bool(reply, "isWritablePrimary") || bool(reply, "ismaster");
        MemberRole role;
        if ("isdbgrid".equals(string(reply, "msg"))) {
            role = MemberRole.MONGOS;
        } else if (setName != null) {
            if (bool(reply, "hidden")) {
                role = MemberRole.OTHER;
            } else if (writable) {
                role = MemberRole.PRIMARY;
            } else if (bool(reply, "secondary")) {
                role = MemberRole.SECONDARY;
            } else if (bool(reply, "arbiterOnly")) {
                role = MemberRole.ARBITER;
            } else {
                role = MemberRole.OTHER;
            }
        } else if (bool(reply, "isreplicaset")) {
            role = MemberRole.OTHER;
        } else {
            role = MemberRole.STANDALONE;
        }
        List<ServerAddress> hosts = new ArrayList<>();
        for (String field : List.of("hosts", "passives", "arbiters")) {
            BsonValue v = reply.get(field);
            if (v instanceof BsonArray array) {
                for (BsonValue h : array) {
                    if (h.isString()) {
                        hosts.add(new ServerAddress(h.asString().getValue()));
                    }
                }
            }
        }
        BsonValue session = reply.get("logicalSessionTimeoutMinutes");
        WireLimits limits = new WireLimits(integer(reply, "minWireVersion", 0), integer(reply, "maxWireVersion", 0),
                integer(reply, "maxBsonObjectSize", DEFAULT_MAX_BSON),
                integer(reply, "maxMessageSizeBytes", DEFAULT_MAX_MESSAGE),
                integer(reply, "maxWriteBatchSize", DEFAULT_MAX_BATCH),
                session != null && session.isNumber() ? session.asNumber().intValue() : null);
        BsonValue election = reply.get("electionId");
        ObjectId electionId = election != null && election.isObjectId() ? election.asObjectId().getValue() : null;
        BsonValue version = reply.get("setVersion");
        Integer setVersion = version != null && version.isNumber() ? version.asNumber().intValue() : null;
        BsonValue tagValue = reply.get("tags");
        BsonDocument tags = tagValue != null && tagValue.isDocument() ? tagValue.asDocument() : new BsonDocument();
        long lastWrite = 0;
        BsonTimestamp applied = null;
        BsonValue lw = reply.get("lastWrite");
        if (lw != null && lw.isDocument()) {
            BsonValue d = lw.asDocument().get("lastWriteDate");
            if (d != null && d.isDateTime()) {
                lastWrite = d.asDateTime().getValue();
            }
            applied = opTime(lw.asDocument().get("opTime"));
        }
        return new MemberDescription(address, role, setName, List.copyOf(hosts), electionId, setVersion, limits, tags,
                lastWrite, applied, helloSupported, null);
    }

    /** An optime as servers report it: {@code {ts, t}} (protocol version 1), or a bare timestamp (older servers). */
    static BsonTimestamp opTime(BsonValue value) {
        if (value != null && value.isDocument()) {
            value = value.asDocument().get("ts");
        }
        return value != null && value.isTimestamp() ? value.asTimestamp() : null;
    }

    private static String string(BsonDocument d, String key) {
        BsonValue v = d.get(key);
        return v != null && v.isString() ? v.asString().getValue() : null;
    }

    private static boolean bool(BsonDocument d, String key) {
        BsonValue v = d.get(key);
        return v != null && (v.isBoolean() ? v.asBoolean().getValue() : v.isNumber() && v.asNumber().intValue() != 0);
    }

    private static int integer(BsonDocument d, String key, int fallback) {
        BsonValue v = d.get(key);
        return v != null && v.isNumber() ? v.asNumber().intValue() : fallback;
    }
}
