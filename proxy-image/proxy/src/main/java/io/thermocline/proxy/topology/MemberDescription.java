package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import java.util.List;
import java.util.Objects;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/**
 * One backend member as its last hello (or the failure to get one) described it.
 *
 * @param hosts       members this one reports (hosts + passives + arbiters), empty for a standalone
 * @param lastWriteMillis {@code lastWrite.lastWriteDate} in epoch millis, 0 when unknown
 * @param appliedOpTime   {@code lastWrite.opTime.ts}: the member has applied every entry up to it (null when unknown);
 *                        a lower bound of what it holds by the time a read reaches it, since it only moves forward
 */
public record MemberDescription(
        ServerAddress address,
        MemberRole role,
        String setName,
        List<ServerAddress> hosts,
        ObjectId electionId,
        Integer setVersion,
        WireLimits limits,
        BsonDocument tags,
        long lastWriteMillis,
        BsonTimestamp appliedOpTime,
        boolean helloSupported,
        String error) {

    public static MemberDescription unknown(ServerAddress address, String error) {
        return new MemberDescription(
                address,
                MemberRole.UNKNOWN,
                null,
                List.of(),
                null,
                null,
                null,
                new BsonDocument(),
                0,
                null,
                true,
                error);
    }

    /** Whether this member has applied every entry up to {@code point} (a time of its own tier's clock). */
    public boolean applied(BsonTimestamp point) {
        return point == null || appliedOpTime != null && appliedOpTime.compareTo(point) >= 0;
    }

    public MemberDescription withAppliedOpTime(BsonTimestamp optime) {
        return new MemberDescription(
                address,
                role,
                setName,
                hosts,
                electionId,
                setVersion,
                limits,
                tags,
                lastWriteMillis,
                optime,
                helloSupported,
                error);
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

    /** A member whose last check failed (not one merely not checked yet). */
    static boolean failedCheck(MemberDescription m) {
        return m.role() == MemberRole.UNKNOWN && m.error() != null && !m.error().equals("not checked yet");
    }

    /** Whether {@code a} was elected after {@code b} (electionId, then setVersion): the other one is a stale primary. */
    static boolean newer(MemberDescription a, MemberDescription b) {
        if (a.electionId() == null || b.electionId() == null) {
            return false;
        }
        int byElection = a.electionId().compareTo(b.electionId());
        if (byElection != 0) {
            return byElection > 0;
        }
        return Objects.requireNonNullElse(a.setVersion(), 0) > Objects.requireNonNullElse(b.setVersion(), 0);
    }

    /** Whether nothing the monitor reports changed between {@code a} and {@code b} (no event, no listener call). */
    static boolean sameState(MemberDescription a, MemberDescription b) {
        return a != null
                && a.role() == b.role()
                && Objects.equals(a.setName(), b.setName())
                && Objects.equals(a.electionId(), b.electionId())
                && Objects.equals(a.limits(), b.limits())
                && Objects.equals(a.error(), b.error())
                && a.hosts().equals(b.hosts());
    }
}
