package io.thermocline.proxy.causal;

import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;

/**
 * The {@code afterClusterTime} a command passed through to one tier may carry. A causally consistent
 * session sends the latest {@code operationTime} it saw from the proxy, and the proxy hands out both
 * tiers' times (tiered replies carry the fast tier's), so the point may come from the other tier's
 * clock: a real member refuses a point beyond its own cluster time (InvalidOptions, 72), and a point
 * below it means nothing for that tier.
 * <ul>
 * <li>a point at or before the tier's cluster time is kept: waiting for it covers every time of this
 *     tier the session saw, since the driver sends the latest of all it saw;</li>
 * <li>a point beyond it is judged against a fresh reading of the tier's clock (this proxy's view may
 *     lag a time another replica handed out): if still beyond, it is none of the tier's own times, and
 *     the tier's present replaces it, which covers every write of the tier the session can have seen.</li>
 * </ul>
 */
public final class PassThroughCausalPoint {

    private PassThroughCausalPoint() {}

    /** The command's {@code readConcern.afterClusterTime}, or null. */
    public static BsonTimestamp of(BsonDocument command) {
        BsonValue readConcern = command.get("readConcern");
        return afterClusterTime(readConcern != null && readConcern.isDocument() ? readConcern.asDocument() : null);
    }

    /** A read concern's {@code afterClusterTime} ({@code readConcern} null: the command has none), or null. */
    public static BsonTimestamp afterClusterTime(BsonDocument readConcern) {
        BsonValue after = readConcern == null ? null : readConcern.get("afterClusterTime");
        return after != null && after.isTimestamp() ? after.asTimestamp() : null;
    }

    /** The time in a {@code $clusterTime} document, or null. */
    public static BsonTimestamp timeOf(Optional<BsonDocument> clusterTime) {
        BsonValue time = clusterTime.map(ct -> ct.get("clusterTime")).orElse(null);
        return time != null && time.isTimestamp() ? time.asTimestamp() : null;
    }

    /** Whether the command's point is beyond the tier's cluster time as known: read the tier's clock before deciding. */
    public static boolean aheadOf(BsonDocument command, BsonTimestamp tierTime) {
        return ahead(of(command), tierTime);
    }

    /** As {@link #aheadOf(BsonDocument, BsonTimestamp)}, for a command whose {@code readConcern} was read already. */
    public static boolean readConcernAheadOf(BsonDocument readConcern, BsonTimestamp tierTime) {
        return ahead(afterClusterTime(readConcern), tierTime);
    }

    private static boolean ahead(BsonTimestamp point, BsonTimestamp tierTime) {
        return point != null && (tierTime == null || point.compareTo(tierTime) > 0);
    }

    /**
     * The read concern to send instead of the client's, given the tier's freshly read cluster time;
     * empty keeps the client's. Without a reading of the tier's time the point is dropped: the tier's
     * primary, where such reads go, sees every write it acknowledged.
     */
    public static Optional<BsonDocument> readConcernFor(BsonDocument command, BsonTimestamp tierTime) {
        BsonValue readConcern = command.get("readConcern");
        return replacingReadConcern(
                readConcern != null && readConcern.isDocument() ? readConcern.asDocument() : null, tierTime);
    }

    /** As {@link #readConcernFor(BsonDocument, BsonTimestamp)}, for a command whose {@code readConcern} was read already. */
    public static Optional<BsonDocument> replacingReadConcern(BsonDocument readConcern, BsonTimestamp tierTime) {
        if (!readConcernAheadOf(readConcern, tierTime)) {
            return Optional.empty();
        }
        BsonDocument replaced = new BsonDocument();
        readConcern.forEach(replaced::append);
        if (tierTime == null) {
            replaced.remove("afterClusterTime");
        } else {
            replaced.put("afterClusterTime", tierTime);
        }
        return Optional.of(replaced);
    }
}
