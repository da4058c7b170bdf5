package io.thermocline.embedded.replication;

import io.thermocline.embedded.oplog.Change;
import io.thermocline.embedded.oplog.OplogEntry;
import io.thermocline.embedded.oplog.OplogPosition;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The majority commit point (the newest position a majority of members has applied) and what a majority read must
 * still see of the writes after it: their pre-images, kept until a majority applied them or they were rolled back.
 */
public final class MajorityCommitPoint {
    /** Pre-images of writes a majority has not applied yet: what majority reads must still see. */
    private final ConcurrentSkipListMap<OplogPosition, Change> notYetMajority = new ConcurrentSkipListMap<>();

    private final List<MemberState> members;

    MajorityCommitPoint(List<MemberState> members) {
        this.members = members;
    }

    /** Keeps the pre-image of each document change stamped into the oplog (caller holds the write lock). */
    void record(List<OplogEntry> entries, List<Change> changes) {
        for (int i = 0; i < entries.size(); i++) {
            if (changes.get(i).documentKey() != null) {
                notYetMajority.put(entries.get(i).position(), changes.get(i));
            }
        }
    }

    /** Forgets the pre-images of entries rolled back: those after the new primary's last applied entry. */
    void rollBackAfter(OplogPosition position) {
        notYetMajority.tailMap(position, false).clear();
    }

    /** Forgets the pre-images of the writes a majority has applied now. */
    void forgetMajorityCommitted() {
        notYetMajority.headMap(majorityCommitted(), true).clear();
    }

    /**
     * For a majority read on a member: the majority-committed version (null: absent) of each
     * document of a collection that writes after the majority point, up to what the member
     * applied, have changed.
     */
    public Map<BsonValue, BsonDocument> majorityPreImages(MemberState member, String database, String collection) {
        Map<BsonValue, BsonDocument> committed = new LinkedHashMap<>();
        OplogPosition majority = majorityCommitted();
        OplogPosition applied = member.applied();
        if (!applied.isAfter(majority)) {
            return committed;
        }
        for (Change c : notYetMajority.subMap(majority, false, applied, true).values()) {
            if (database.equals(c.database())
                    && collection.equals(c.collection())
                    && !committed.containsKey(c.documentKey().get("_id"))) {
                committed.put(c.documentKey().get("_id"), c.preImage());
            }
        }
        return committed;
    }

    /**
     * The operationTime of a majority read of a member: the majority commit point, or what the member has applied if
     * it is behind that point.
     */
    public BsonTimestamp majorityReadTime(MemberState member) {
        OplogPosition majority = majorityCommitted();
        return (member.visible().isAfter(majority) ? majority : member.visible()).clusterTime();
    }

    /** The newest position a majority of members has applied: what change streams may show. */
    public OplogPosition majorityCommitted() {
        List<OplogPosition> positions = new ArrayList<>();
        for (MemberState m : members) {
            positions.add(m.applied());
        }
        positions.sort(Comparator.reverseOrder());
        return positions.get(members.size() / 2);
    }
}
