package io.thermocline.tiering.state;

import java.util.Objects;
import org.bson.BsonTimestamp;

/**
 * The fast-tier cluster time up to which the feeder has mirrored every write into the archive
 * (acknowledged by the archive with majority). A read routed to the archive is safe for a session
 * once this covers the session's causal point.
 */
public record MirroredThrough(BsonTimestamp clusterTime) implements Comparable<MirroredThrough> {

    /** Nothing mirrored yet: covers only the zero cluster time. */
    public static final MirroredThrough NOTHING = new MirroredThrough(new BsonTimestamp(0, 0));

    public MirroredThrough {
        Objects.requireNonNull(clusterTime, "clusterTime");
    }

    /** True when every fast-tier write at or before {@code causalPoint} is in the archive. */
    public boolean covers(BsonTimestamp causalPoint) {
        return causalPoint == null || clusterTime.compareTo(causalPoint) >= 0;
    }

    /** The later of the two: progress never moves backwards when two reports race. */
    public MirroredThrough atLeast(MirroredThrough other) {
        return other != null && other.compareTo(this) > 0 ? other : this;
    }

    @Override
    public int compareTo(MirroredThrough other) {
        return clusterTime.compareTo(other.clusterTime);
    }

    @Override
    public String toString() {
        return "mirrored through " + clusterTime.getTime() + "." + clusterTime.getInc();
    }
}
