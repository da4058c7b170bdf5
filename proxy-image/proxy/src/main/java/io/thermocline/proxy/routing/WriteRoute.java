package io.thermocline.proxy.routing;

import java.util.Objects;
import java.util.Optional;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Where one write statement goes. The cases are decisions only; promotion, sync barriers and count
 * merging are done by the proxy's I/O code.
 */
public sealed interface WriteRoute {

    Reason reason();

    /** Run the statement as sent on the fast tier; the feeder mirrors it. */
    record FastTier(Reason reason) implements WriteRoute {
        public FastTier {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * The statement can only touch (or create) the document with this {@code _id}: make sure the fast
     * tier holds it (promote it from the archive when only the archive has it, never over a newer
     * fast-tier version or a tombstone), then run the statement as sent on the fast tier. This also gives
     * an insert or upsert of an archived {@code _id} its duplicate-key error, as one database would.
     */
    record PointWrite(BsonValue id, Reason reason) implements WriteRoute {
        public PointWrite {
            Objects.requireNonNull(id, "id");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * A single-document write whose filter is not provably hot and names no {@code _id}: after the
     * session's sync barrier (the archive then holds every document's latest version) find the target in
     * the archive with {@code filter} and {@code sort}, promote it, and run the statement on the fast tier
     * restricted to that {@code _id}. When nothing matches and the statement upserts, the upsert runs on the
     * fast tier, first as a {@link PointWrite} of {@code upsertId} when the new document's {@code _id} is given.
     */
    record ResolveOneThenPointWrite(BsonDocument filter, BsonDocument sort, boolean upsert, Optional<BsonValue> upsertId, Reason reason)
            implements WriteRoute {
        public ResolveOneThenPointWrite {
            Objects.requireNonNull(filter, "filter");
            Objects.requireNonNull(sort, "sort");
            Objects.requireNonNull(upsertId, "upsertId");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * A multi-document write whose filter is not provably hot: after the sync barrier, apply it to both
     * tiers (without upsert) and report counts over the union of the documents matched. When nothing
     * matched in either tier and the statement upserts, the upsert runs on the fast tier (as a
     * {@link PointWrite} of {@code upsertId} when given).
     */
    record BothTiers(boolean upsert, Optional<BsonValue> upsertId, Reason reason) implements WriteRoute {
        public BothTiers {
            Objects.requireNonNull(upsertId, "upsertId");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** An untiered namespace: the archive, unchanged. */
    record Archive(Reason reason) implements WriteRoute {
        public Archive {
            Objects.requireNonNull(reason, "reason");
        }
    }
}
