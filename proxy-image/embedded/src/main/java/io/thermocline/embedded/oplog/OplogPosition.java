package io.thermocline.embedded.oplog;

import org.bson.BsonTimestamp;

/**
 * Where an entry sits in the oplog: its cluster time and, inside a transaction (whose entries share
 * one cluster time), its index. Resume tokens encode exactly this, so resuming is exact.
 */
public record OplogPosition(long timestamp, int index) implements Comparable<OplogPosition> {

    public static final OplogPosition ORIGIN = new OplogPosition(0, 0);

    public static OplogPosition of(BsonTimestamp ts) {
        return new OplogPosition(ts.getValue(), 0);
    }

    /** The position after every entry stamped with this cluster time. */
    public static OplogPosition endOf(BsonTimestamp ts) {
        return new OplogPosition(ts.getValue(), Integer.MAX_VALUE);
    }

    public BsonTimestamp clusterTime() {
        return new BsonTimestamp(timestamp);
    }

    @Override
    public int compareTo(OplogPosition other) {
        int byTime = Long.compareUnsigned(timestamp, other.timestamp);
        return byTime != 0 ? byTime : Integer.compare(index, other.index);
    }

    public boolean isAfter(OplogPosition other) {
        return compareTo(other) > 0;
    }

    public String key() {
        return String.format("%016x%08x", timestamp, index);
    }
}
