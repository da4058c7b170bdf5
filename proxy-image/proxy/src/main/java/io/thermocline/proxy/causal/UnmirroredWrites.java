package io.thermocline.proxy.causal;

import io.thermocline.tiering.state.MirroredThrough;
import java.util.Collection;
import org.bson.BsonTimestamp;

/**
 * What a {@code linearizable} archive-routed read must wait for, from this proxy's view of the fast
 * tier's writes ({@link FastTierWrites}) instead of a probe write. Pure.
 *
 * <p>{@code present} is a fast-tier cluster time read after the read arrived (at or after every write
 * the fast tier acknowledged before). When the stream has read every write from a point the feeder's
 * mirrored-through M covers up to {@code present}, the writes the read must see and the archive may
 * lack are exactly the seen writes to its namespaces after M: none means the archive already holds
 * everything (the read waits for nothing), otherwise it waits until M covers the latest of them.
 * Anything else is {@link Unknown}: the caller takes the fast tier's present with a probe, as before.
 */
public final class UnmirroredWrites {

    private UnmirroredWrites() {}

    public sealed interface Verdict {}

    /** The archive holds every write to the read's namespaces acknowledged before {@code present}. */
    public record Nothing() implements Verdict {}

    /** The archive holds them once mirrored-through covers {@code latest}, the latest seen write to one of them. */
    public record WaitFor(BsonTimestamp latest) implements Verdict {}

    /** The stream cannot tell (not open, behind the present, or started after mirrored-through). */
    public record Unknown(String why) implements Verdict {}

    /**
     * @param namespaces the tiered namespaces ("db.coll") the read touches; null: every tiered namespace
     * @param tiered     every tiered namespace
     */
    public static Verdict decide(
            FastTierWrites.Seen seen,
            BsonTimestamp present,
            MirroredThrough mirrored,
            Collection<String> namespaces,
            Collection<String> tiered) {
        if (seen == null || seen.from() == null) {
            return new Unknown("no stream");
        }
        if (present == null || !seen.reached(present)) {
            return new Unknown("stream behind the present");
        }
        if (!mirrored.covers(seen.from())) {
            // writes between mirrored-through and the stream's start were never seen
            return new Unknown("stream started after mirrored-through");
        }
        BsonTimestamp latest = latest(seen, namespaces == null ? tiered : namespaces);
        return latest == null || mirrored.covers(latest) ? new Nothing() : new WaitFor(latest);
    }

    /**
     * Whether a read of {@code namespaces} may ask the archive before it knows the fast tier's present
     * ({@link ReadBarrier.Speculation}): the stream is open from a point {@code mirrored} covers and shows no write to
     * them that {@code mirrored} does not cover. A hint only: the answer is kept when {@link #decide}, with the same
     * {@code mirrored} and a present read after the archive query was sent, says {@link Nothing}. It spares a read that
     * would wait anyway an archive query thrown away.
     */
    public static boolean worthSpeculating(
            FastTierWrites.Seen seen, MirroredThrough mirrored, Collection<String> namespaces) {
        if (seen == null || seen.from() == null || seen.through() == null || !mirrored.covers(seen.from())) {
            return false;
        }
        BsonTimestamp latest = latest(seen, namespaces);
        return latest == null || mirrored.covers(latest);
    }

    private static BsonTimestamp latest(FastTierWrites.Seen seen, Collection<String> namespaces) {
        BsonTimestamp latest = null;
        for (String namespace : namespaces) {
            BsonTimestamp write = seen.latest(namespace);
            if (write != null && (latest == null || write.compareTo(latest) > 0)) {
                latest = write;
            }
        }
        return latest;
    }
}
