package io.thermocline.operator.mode;

import java.time.Instant;
import java.util.Date;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * The fast tier's {@code thermocline.state} document {@code _id: "archiveFollower"}, written by the data plane's
 * archive follower (it runs in the feeder process and keeps the fast tier in step while the archive is
 * authoritative: Shadowing, CuttingOver, Drained): who holds its lease ({@code lease.owner}, {@code term},
 * {@code expiresAt}), how far it has applied the archive ({@code appliedThrough}, an archive optime) and its last
 * resync after lost change-stream history ({@code resync}, progress counted while it runs).
 */
public record FollowerDocument(String holder, long term, Instant leaseExpiresAt, BsonTimestamp appliedThrough, Resync resync) {

    public static final String ID = "archiveFollower";
    /** No follower has ever taken the lease. */
    public static final FollowerDocument MISSING = new FollowerDocument(null, 0, null, null, null);

    /** The last resync; {@code finishedAt} null while it runs, {@code copied}/{@code deleted} so far. */
    public record Resync(long count, Instant startedAt, Instant finishedAt, String reason, long copied, long deleted) {

        public boolean running() {
            return finishedAt == null;
        }
    }

    public static FollowerDocument parse(Document d) {
        if (d == null) {
            return MISSING;
        }
        Document lease = d.get("lease") instanceof Document l ? l : null;
        Resync resync = d.get("resync") instanceof Document r
                ? new Resync(number(r.get("count")), instant(r.get("startedAt")), instant(r.get("finishedAt")),
                        r.getString("reason"), number(r.get("copied")), number(r.get("deleted")))
                : null;
        return new FollowerDocument(lease == null ? null : lease.getString("owner"), lease == null ? 0 : number(lease.get("term")),
                lease == null ? null : instant(lease.get("expiresAt")),
                d.get("appliedThrough") instanceof BsonTimestamp t ? t : null, resync);
    }

    /** Whether an instance holds the lease at {@code now} (a follower that stops cleanly expires it at once). */
    public boolean running(Instant now) {
        return holder != null && leaseExpiresAt != null && leaseExpiresAt.isAfter(now);
    }

    /**
     * Seconds of archive history not yet applied: from {@code appliedThrough} to {@code target} (the archive's
     * latest optime, read after this document, so the lag is never under-reported); null when either is unknown.
     */
    public Long lagSeconds(BsonTimestamp target) {
        if (target == null || appliedThrough == null) {
            return null;
        }
        return Math.max(0, seconds(target) - seconds(appliedThrough));
    }

    /** An optime's wall-clock part (the seconds of a BSON timestamp, unsigned). */
    static long seconds(BsonTimestamp t) {
        return t.getTime() & 0xFFFFFFFFL;
    }

    private static long number(Object value) {
        return value instanceof Number n ? n.longValue() : 0;
    }

    private static Instant instant(Object value) {
        return value instanceof Date date ? date.toInstant() : null;
    }
}
