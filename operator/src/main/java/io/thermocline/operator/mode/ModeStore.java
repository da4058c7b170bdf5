package io.thermocline.operator.mode;

import java.time.Instant;
import java.util.Optional;
import org.bson.BsonTimestamp;

/**
 * The operator's access to the fast tier's mode document, shadow evidence and archive follower, by the fast
 * tier's connection string (and the archive's, for the archive's latest optime). Every call is bounded by a short timeout, so a reconcile never hangs on an
 * unreachable fast tier. Faked in tests by a model of the data plane's mode controller.
 */
public interface ModeStore {

    /**
     * What the fast tier holds now; empty when it cannot be read. {@code archiveUri} (null: not known) is asked
     * for its latest optime after the follower's document is read; when it cannot be, {@code archiveLatest} is null.
     */
    Optional<ModeReading> read(String fastTierUri, String archiveUri);

    /**
     * Writes {@code request} with a compare-and-set on the document's {@code version}
     * ({@code expectedVersion} null: the document or its version is missing), with {@code requestedAt: at}.
     */
    Written request(String fastTierUri, ModeRequest request, Long expectedVersion, Instant at);

    /** Drops what is kept for this fast tier (its client) once its cluster is gone. */
    default void forget(String fastTierUri) {
    }

    /**
     * The mode document, the sums of the shadow evidence, the archive follower's document, and the archive's
     * latest optime (null: not read), read after it.
     */
    record ModeReading(ModeDocument mode, ShadowEvidence shadow, FollowerDocument follower, BsonTimestamp archiveLatest) {

        /** The same reading with the mode document as it is after a request the operator just wrote. */
        public ModeReading with(ModeDocument changed) {
            return new ModeReading(changed, shadow, follower, archiveLatest);
        }
    }

    /** How a request write ended. */
    enum Written {
        /** The document now carries the request. */
        WRITTEN,
        /** Someone else (the data plane's controller, a CLI) changed the document first: read again and retry. */
        CONFLICT,
        /** The fast tier cannot be written right now. */
        UNREACHABLE
    }
}
