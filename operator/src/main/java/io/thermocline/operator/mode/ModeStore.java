package io.thermocline.operator.mode;

import java.time.Instant;
import java.util.Optional;

/**
 * The operator's access to the fast tier's mode document and shadow evidence, by the fast tier's
 * connection string. Every call is bounded by a short timeout, so a reconcile never hangs on an
 * unreachable fast tier. Faked in tests by a model of the data plane's mode controller.
 */
public interface ModeStore {

    /** What the fast tier holds now; empty when it cannot be read. */
    Optional<ModeReading> read(String fastTierUri);

    /**
     * Writes {@code request} with a compare-and-set on the document's {@code version}
     * ({@code expectedVersion} null: the document or its version is missing), with {@code requestedAt: at}.
     */
    Written request(String fastTierUri, ModeRequest request, Long expectedVersion, Instant at);

    /** Drops what is kept for this fast tier (its client) once its cluster is gone. */
    default void forget(String fastTierUri) {
    }

    /** The mode document and the sums of the shadow evidence. */
    record ModeReading(ModeDocument mode, ShadowEvidence shadow) {
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
