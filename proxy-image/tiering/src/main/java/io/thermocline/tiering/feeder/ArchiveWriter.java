package io.thermocline.tiering.feeder;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.reactive.Blocking;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies one namespace's mirror actions to the archive: one ordered bulk write, majority write
 * concern, a client-side timeout. A write the archive refuses for good ({@link DeadLetters#permanent})
 * is recorded as a dead letter and the rest of the batch goes on; any other failure is thrown, so
 * the whole batch is retried from the checkpoint.
 *
 * <p>Every write of this writer goes in one session, as a retryable write: each carries the session's next
 * {@code txnNumber}, and the archive refuses a statement older than one it already ran ({@code TransactionTooOld}).
 * So a write the writer gave up on at its timeout, still on its way and run late by the archive, can never land
 * over the newer versions of the retried batch: it fails instead (docs/consistency.md, "Abandoned archive writes").
 */
final class ArchiveWriter implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(ArchiveWriter.class);

    /**
     * @param deadLettered  how many writes were set aside
     * @param succeeded     the ids whose last write in the batch went through (their dead letters are void)
     */
    record Outcome(int deadLettered, List<BsonValue> succeeded) {
    }

    private final MongoClient archive;
    private final DeadLetters deadLetters;
    private final FeederMetrics metrics;
    private ClientSession session;

    ArchiveWriter(MongoClient archive, DeadLetters deadLetters, FeederMetrics metrics) {
        this.archive = archive;
        this.deadLetters = deadLetters;
        this.metrics = metrics;
    }

    /** @param timeoutMillis the client-side timeout for each bulk write, asked again before each (it shrinks with the lease) */
    Outcome write(Namespace namespace, List<MirrorAction> actions, LongSupplier timeoutMillis) {
        MongoCollection<BsonDocument> base = namespace.in(archive).withWriteConcern(WriteConcern.MAJORITY);
        Map<DocumentKey, Boolean> lastWent = new LinkedHashMap<>();
        int deadLettered = 0;
        int from = 0;
        while (from < actions.size()) {
            List<MirrorAction> rest = actions.subList(from, actions.size());
            MongoCollection<BsonDocument> collection = base.withTimeout(timeoutMillis.getAsLong(), TimeUnit.MILLISECONDS);
            try {
                Blocking.run(collection.bulkWrite(session(), models(rest), new BulkWriteOptions().ordered(true)));
                count(rest);
                rest.forEach(a -> lastWent.put(new DocumentKey(a.documentId()), true));
                break;
            } catch (MongoBulkWriteException e) {
                if (e.getWriteConcernError() != null || e.getWriteErrors().isEmpty()) {
                    throw e;
                }
                // ordered: every write before the first error was applied, none after it is known to be
                BulkWriteError first = e.getWriteErrors().stream().min(Comparator.comparingInt(BulkWriteError::getIndex)).orElseThrow();
                if (!DeadLetters.permanent(first.getCode())) {
                    throw e;
                }
                List<MirrorAction> applied = rest.subList(0, first.getIndex());
                count(applied);
                applied.forEach(a -> lastWent.put(new DocumentKey(a.documentId()), true));
                MirrorAction refused = rest.get(first.getIndex());
                deadLetters.record(namespace, refused.documentId(), refused instanceof MirrorAction.Upsert ? "upsert" : "delete",
                        first.getCode(), first.getMessage());
                lastWent.put(new DocumentKey(refused.documentId()), false);
                metrics.deadLettered.inc();
                deadLettered++;
                LOG.warn("event=feeder_dead_letter namespace={} id={} code={} error=\"{}\"", namespace, refused.documentId(),
                        first.getCode(), first.getMessage());
                from += first.getIndex() + 1;
            }
        }
        List<BsonValue> succeeded = new ArrayList<>();
        lastWent.forEach((key, went) -> {
            if (went) {
                succeeded.add(key.id());
            }
        });
        return new Outcome(deadLettered, succeeded);
    }

    /** The writer's one session (see above), started on first use. */
    private ClientSession session() {
        if (session == null) {
            session = Blocking.single(archive.startSession()).orElseThrow();
        }
        return session;
    }

    @Override
    public void close() {
        if (session != null) {
            session.close();
            session = null;
        }
    }

    private void count(List<MirrorAction> written) {
        long upserts = written.stream().filter(a -> a instanceof MirrorAction.Upsert).count();
        metrics.archiveWrites.labelValues("upsert").inc(upserts);
        metrics.archiveWrites.labelValues("delete").inc(written.size() - upserts);
    }

    private static List<WriteModel<BsonDocument>> models(List<MirrorAction> actions) {
        List<WriteModel<BsonDocument>> models = new ArrayList<>(actions.size());
        for (MirrorAction action : actions) {
            if (action instanceof MirrorAction.Upsert upsert) {
                models.add(new ReplaceOneModel<>(Filters.eq("_id", upsert.documentId()), upsert.document(),
                        new ReplaceOptions().upsert(true)));
            } else {
                models.add(new DeleteOneModel<>(Filters.eq("_id", action.documentId())));
            }
        }
        return models;
    }
}
