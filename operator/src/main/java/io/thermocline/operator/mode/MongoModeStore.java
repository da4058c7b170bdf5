package io.thermocline.operator.mode;

import com.mongodb.ErrorCategory;
import com.mongodb.MongoException;
import com.mongodb.MongoWriteException;
import com.mongodb.WriteConcern;
import com.mongodb.client.ClientSession;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Updates;
import jakarta.annotation.PreDestroy;
import io.thermocline.operator.tiering.TierClients;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonTimestamp;
import org.bson.Document;
import org.bson.conversions.Bson;

/**
 * Reads and writes the mode document in the fast tier's {@code thermocline.state}, sums
 * {@code thermocline.shadow}, reads the archive follower's document and the archive's latest optime. One client per fast tier is kept across reconciles (its
 * connection pool and monitoring survive; {@link TierClients} closes it once unused), and every operation is bounded by
 * {@value #TIMEOUT_MILLIS} ms, so an unreachable fast tier costs a reconcile at most that.
 */
@ApplicationScoped
public class MongoModeStore implements ModeStore {

    static final String METADATA_DB = "thermocline";
    static final String STATE = "state";
    static final String SHADOW = "shadow";
    private static final int TIMEOUT_MILLIS = 2000;

    private final TierClients clients = new TierClients(Duration.ofMinutes(10), TIMEOUT_MILLIS / 1000, Clock.systemUTC());

    @Override
    public Optional<ModeReading> read(String fastTierUri, String archiveUri) {
        try {
            MongoDatabase metadata = metadata(fastTierUri);
            ModeDocument mode = ModeDocument.parse(metadata.getCollection(STATE).find(Filters.eq("_id", ModeDocument.ID)).first());
            ShadowEvidence shadow = ShadowEvidence.sum(metadata.getCollection(SHADOW).find()
                    .projection(Projections.exclude("samples")).into(new ArrayList<>()));
            FollowerDocument follower = FollowerDocument.parse(metadata.getCollection(STATE)
                    .find(Filters.eq("_id", FollowerDocument.ID)).projection(Projections.exclude("changing", "resumeToken")).first());
            // the archive is asked only where the follower runs (and after its document, so its lag is never under-reported)
            return Optional.of(new ModeReading(mode, shadow, follower, mode.archiveAuthoritative() ? archiveLatest(archiveUri) : null));
        } catch (MongoException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /**
     * The archive's present as the data plane's mode controller reads it: the {@code operationTime} of a ping
     * (no later than any write acknowledged before it); null when the archive cannot be asked right now.
     */
    static BsonTimestamp archiveLatest(MongoClient archive) {
        try (ClientSession session = archive.startSession()) {
            archive.getDatabase("admin").withTimeout(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS).runCommand(session, new Document("ping", 1));
            return session.getOperationTime();
        } catch (MongoException e) {
            return null;
        }
    }

    private BsonTimestamp archiveLatest(String archiveUri) {
        try {
            return archiveUri == null ? null : archiveLatest(clients.forUri(archiveUri));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    @Override
    public Written request(String fastTierUri, ModeRequest request, Long expectedVersion, Instant at) {
        try {
            MongoCollection<Document> state = metadata(fastTierUri).getCollection(STATE).withWriteConcern(WriteConcern.MAJORITY);
            long next = expectedVersion == null ? 1 : expectedVersion + 1;
            Bson update = Updates.combine(Updates.set("requested", request.mode().value()), Updates.set("override", request.override()),
                    Updates.set("requestedBy", request.requestedBy()), Updates.set("requestedAt", Date.from(at)),
                    Updates.set("version", next));
            // {version: null} also matches a document without the field; a missing document is inserted
            var result = state.updateOne(Filters.and(Filters.eq("_id", ModeDocument.ID), Filters.eq("version", expectedVersion)), update);
            if (result.getMatchedCount() == 1) {
                return Written.WRITTEN;
            }
            if (expectedVersion != null || state.countDocuments(Filters.eq("_id", ModeDocument.ID)) > 0) {
                return Written.CONFLICT;
            }
            state.insertOne(new Document("_id", ModeDocument.ID).append("requested", request.mode().value())
                    .append("override", request.override()).append("requestedBy", request.requestedBy())
                    .append("requestedAt", Date.from(at)).append("version", next));
            return Written.WRITTEN;
        } catch (MongoWriteException e) {
            return e.getError().getCategory() == ErrorCategory.DUPLICATE_KEY ? Written.CONFLICT : Written.UNREACHABLE;
        } catch (MongoException | IllegalArgumentException e) {
            return Written.UNREACHABLE;
        }
    }

    @Override
    public void forget(String fastTierUri) {
        clients.forget(fastTierUri);
    }

    @PreDestroy
    void close() {
        clients.close();
    }

    private MongoDatabase metadata(String uri) {
        return clients.forUri(uri).getDatabase(METADATA_DB).withTimeout(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    }
}
