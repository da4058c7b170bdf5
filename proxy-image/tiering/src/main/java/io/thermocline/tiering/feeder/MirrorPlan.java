package io.thermocline.tiering.feeder;

import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.TransactionId;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;

/**
 * The archive writes of one batch of change events, grouped per namespace in event order, and
 * the checkpoint to persist once the archive acknowledged all of them.
 *
 * @param mirroredThrough   the cluster time up to which every write is covered by this plan: the
 *                          last event's, or just below it when the batch ends inside a transaction
 *                          whose remaining events are still to come
 * @param openOwnTransaction the own transaction the batch ends inside, if any
 * @param missingImageAt    the cluster time of the earliest user write in the batch that mirrors nothing
 *                          because its document was gone when it was looked up, and whose document no
 *                          later event of the batch deletes (the archive lacks that write until the
 *                          delete is applied); null when there is none
 */
public record MirrorPlan(
        Map<Namespace, List<MirrorAction>> actions,
        BsonDocument resumeToken,
        BsonTimestamp mirroredThrough,
        TransactionId openOwnTransaction,
        BsonTimestamp missingImageAt,
        Counts counts) {

    public record Counts(int events, int mirrored, int coalesced, int own, int ignored) {
    }

    public int actionCount() {
        return actions.values().stream().mapToInt(List::size).sum();
    }
}
