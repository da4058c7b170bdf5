package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

import java.util.List;

/**
 * One backend member as its last hello (or the failure to get one) described it.
 *
 * @param hosts       members this one reports (hosts + passives + arbiters), empty for a standalone
 * @param lastWriteMillis {@code lastWrite.lastWriteDate} in epoch millis, 0 when unknown
 */
public record MemberDescription(ServerAddress address, MemberRole role, String setName, List<ServerAddress> hosts,
                                ObjectId electionId, Integer setVersion, WireLimits limits, BsonDocument tags,
                                long lastWriteMillis, boolean helloSupported, String error) {

    public static MemberDescription unknown(ServerAddress address, String error) {
        return new MemberDescription(address, MemberRole.UNKNOWN, null, List.of(), null, null, null,
                new BsonDocument(), 0, true, error);
    }

    public boolean tagsMatch(BsonDocument tagSet) {
        for (var e : tagSet.entrySet()) {
            BsonValue v = tags.get(e.getKey());
            if (v == null || !v.equals(e.getValue())) {
                return false;
            }
        }
        return true;
    }
}
