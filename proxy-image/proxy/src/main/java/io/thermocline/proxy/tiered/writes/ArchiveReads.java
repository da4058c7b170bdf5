package io.thermocline.proxy.tiered.writes;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.proxy.backend.BackendUnavailableException;
import io.thermocline.proxy.topology.OutOfService;
import io.thermocline.proxy.topology.Tier;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The archive as the write path reaches it: every read a write makes there (the documents only the archive holds,
 * their copy-up, unique keys) and every wait for the feeder to mirror into it ({@link SyncBarrier}) goes through
 * {@link #client}, which refuses at once, with the retryable {@code HostUnreachable} naming the tier, while the archive
 * is out of service ({@link OutOfService}: unreachable, or stalled). The refusal comes before the write's transaction
 * commits, so nothing of it stands: a paused archive no longer holds the write for its read's own timeout
 * (docs/faults.md).
 */
final class ArchiveReads {

    private final MongoClient archive;
    /** How long the archive has been out of service (empty while it serves). */
    private final Supplier<Optional<Duration>> outOfServiceFor;

    ArchiveReads(MongoClient archive, Supplier<Optional<Duration>> outOfServiceFor) {
        this.archive = archive;
        this.outOfServiceFor = java.util.Objects.requireNonNull(outOfServiceFor, "outOfServiceFor");
    }

    /** The archive's client for a read {@code work} (a command's name, or "write") needs; refused while out of service. */
    MongoClient client(String work) {
        refuseWhileOutOfService(work);
        return archive;
    }

    /** Throws the refusal of {@code work} while the archive is out of service; returns while it serves. */
    void refuseWhileOutOfService(String work) {
        Optional<BackendUnavailableException> refused = OutOfService.refusal(Tier.ARCHIVE, outOfServiceFor.get(), work);
        if (refused.isPresent()) {
            throw refused.get();
        }
    }
}
