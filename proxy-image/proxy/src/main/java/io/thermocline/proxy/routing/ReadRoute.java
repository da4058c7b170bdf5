package io.thermocline.proxy.routing;

import java.util.Objects;
import org.bson.BsonValue;

/** Where a read goes. Every case names its {@link Reason}, the label the decision is counted under. */
public sealed interface ReadRoute {

    Reason reason();

    /** The fast tier provably holds the whole answer. */
    record FastTier(Reason reason) implements ReadRoute {
        public FastTier {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * A read of one document by {@code _id}: ask the fast tier; if it holds the document its answer is
     * the newest version. On a miss, read the archive (after the session's sync barrier; a fast-tier
     * tombstone means the document is gone) and promote the document when it is inside the window.
     */
    record PointReadFastFirst(BsonValue id, Reason reason) implements ReadRoute {
        public PointReadFastFirst {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** The archive answers: it holds every document, once the session's sync barrier is passed. */
    record Archive(Reason reason) implements ReadRoute {
        public Archive {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** No tier can answer this correctly; the client gets {@code message}, which says what to do. */
    record Refused(Reason reason, String message) implements ReadRoute {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }
}
