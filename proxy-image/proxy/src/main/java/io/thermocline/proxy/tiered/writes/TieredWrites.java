package io.thermocline.proxy.tiered.writes;

import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.WriteRouter;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.MirrorBarrier;
import io.thermocline.tiering.provenance.CopyMarks;
import io.thermocline.tiering.provenance.Fence;
import io.thermocline.tiering.provenance.Fences;
import io.thermocline.tiering.provenance.UserDeletes;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Writes on tiered namespaces, per {@link WriteRouter}: every user write lands in the fast tier (the
 * feeder mirrors it). By kind: {@link Inserts}, {@link Updates}, {@link Deletes}, {@link FindAndModifies}.
 * A write that may touch cold documents runs as a {@link GuardedWrite}, which copies them in first inside
 * its transaction, so the fast tier's own reply carries the exact counts one database would give. Deletes
 * decide their targets inside their transaction and leave a {@code USER_DELETE} fence per document
 * ({@link UserDeletes}), so the feeder deletes the archive copy; every copy claims the fences of what it
 * copies ({@link Fences#claim}), so a copy and a delete of one document conflict instead of both
 * committing. Every transaction the write path runs goes through one runner, {@link GuardedTransaction},
 * which also records the replies of retryable writes ({@link RetryableReplies}); a retryable update or
 * findAndModify whose attempts take different paths (forwarded, guarded) runs once ({@link ExactlyOnce}).
 */
public final class TieredWrites {

    private final RetryableReplies replies;
    private final Fences fences;
    private final SyncBarrier sync;
    private final RouteCounter routes;
    private final Inserts inserts;
    private final Updates updates;
    private final Deletes deletes;
    private final FindAndModifies findAndModifies;
    private final TransactionStatements inTransactions;

    public TieredWrites(
            MongoClient fast,
            MongoClient archiveClient,
            MirrorBarrier barrier,
            Duration barrierTimeout,
            UserDeletes userDeletes,
            Fences fences,
            RetryableReplies replies,
            RoutingMetrics metrics,
            MetadataStore store,
            String instanceId,
            Duration fenceRetention,
            Promotion promotion,
            WriteRaces races,
            java.util.function.Supplier<java.util.Optional<Duration>> archiveOutOfServiceFor) {
        this.replies = replies;
        this.fences = fences;
        // while the archive is out of service, writes that must read it (inserts, writes of documents only the archive
        // holds, writes waiting for the feeder to mirror into it) are refused at once, nothing written (docs/faults.md)
        ArchiveReads archive = new ArchiveReads(archiveClient, archiveOutOfServiceFor);
        this.sync = new SyncBarrier(barrier, barrierTimeout, archive);
        this.routes = new RouteCounter(metrics);
        GuardedTransaction transactions = new GuardedTransaction(fast, replies);
        UniqueIndexes uniques = new UniqueIndexes(fast, archive, fences);
        GuardedCopies copies =
                new GuardedCopies(fast, archive, fences, new CopyMarks(store), fenceRetention.dividedBy(2));
        GuardedWrite guarded = new GuardedWrite(
                fast,
                archive,
                fences,
                copies,
                transactions,
                sync,
                store.collection(MetadataStore.PROBES),
                "proxy-write/" + instanceId + "/",
                races,
                uniques);
        ExactlyOnce once = new ExactlyOnce(guarded, new RetryClaims(store), races);
        this.inserts = new Inserts(fast, archive, promotion, replies, guarded, routes, races, uniques);
        this.updates = new Updates(fast, archive, sync, guarded, once, routes, uniques);
        this.deletes = new Deletes(fast, archive, fences, userDeletes, transactions, copies, sync, routes, races);
        this.findAndModifies =
                new FindAndModifies(fast, archive, fences, transactions, once, copies, sync, routes, uniques);
        this.inTransactions = new TransactionStatements(archive, fences, sync, fenceRetention.dividedBy(2));
    }

    public RawBsonDocument serve(WriteRequest x, CommandClass.Write write) throws InterruptedException {
        // mongod parses the write concern before it looks at the write or its retry record: nothing runs
        Optional<ClientWriteConcern.Refusal> invalid = ClientWriteConcern.refusal(x.command());
        if (invalid.isPresent()) {
            return invalid.get().reply();
        }
        CollectionPolicy policy = x.table().policy(write.namespace()).orElseThrow();
        CoverageBound bound = x.table().coverage(write.namespace());
        replies.ensureCollection();
        // An insert is retried on the same path, or finds its own documents (Inserts), so the hot path of new
        // documents pays no extra read. Other writes may change path between attempts (coverage moved, a
        // match left the archive).
        Optional<RawBsonDocument> replayed =
                write.kind() == CommandClass.WriteKind.INSERT ? Optional.empty() : replies.replay(x);
        if (replayed.isPresent()) {
            return replayed.get();
        }
        try {
            return switch (write.kind()) {
                case INSERT -> inserts.insert(x, write, policy, bound);
                case UPDATE -> updates.update(x, write, policy, bound);
                case DELETE -> deletes.delete(x, write, policy, bound);
                case FIND_AND_MODIFY -> findAndModifies.findAndModify(x, write, policy, bound);
            };
        } catch (GuardedTransaction.Replayed recorded) {
            return replies.answered(x, recorded.reply);
        }
    }

    /**
     * A statement of the client's transaction on the fast tier that addresses {@code cold} documents by
     * {@code _id} (copied in first) or deletes (fenced), both inside that transaction ({@link TransactionStatements}).
     */
    public RawBsonDocument inTransaction(WriteRequest x, String namespace, CommandClass statement, List<BsonValue> cold)
            throws InterruptedException {
        return inTransactions.run(x, namespace, statement, cold);
    }

    /** Whether a statement of a transaction deletes (a delete, a findAndModify remove): its fences must join the transaction. */
    public static boolean deletes(CommandClass statement) {
        return statement instanceof CommandClass.Write w
                && (w.kind() == CommandClass.WriteKind.DELETE
                        || w.kind() == CommandClass.WriteKind.FIND_AND_MODIFY
                                && Statements.flag(w.statements().get(0), "remove"));
    }

    /**
     * Runs a {@code drop} or {@code dropDatabase} of tiered namespaces: first their drop fences (a copy-up
     * that read the archive before the drop then copies nothing), then the sync barrier (every fast-tier
     * write acknowledged before the drop is in the archive, so the feeder cannot mirror one after it), then
     * {@code drop} itself (archive, then fast tier), then the fences that say the drop is done.
     */
    public RawBsonDocument dropping(List<String> namespaces, Drop drop) throws InterruptedException {
        namespaces.forEach(ns -> fences.writeDrop(ns, Fence.Kind.DROP_STARTED));
        try {
            sync.await();
            return drop.run();
        } finally {
            namespaces.forEach(ns -> fences.writeDrop(ns, Fence.Kind.DROPPED));
        }
    }

    /** The drop itself, on both tiers. */
    public interface Drop {
        RawBsonDocument run() throws InterruptedException;
    }
}
