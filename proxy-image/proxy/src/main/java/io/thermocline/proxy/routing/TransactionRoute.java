package io.thermocline.proxy.routing;

import java.util.List;
import java.util.Objects;
import org.bson.BsonValue;

/** Where one statement of a multi-statement transaction runs, or why it cannot. */
public sealed interface TransactionRoute {

    Reason reason();

    /** Run the statement inside the transaction on {@code tier}. */
    record Run(TransactionTier tier, Reason reason) implements TransactionRoute {
        public Run {
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * Copy the archived versions of these documents into the fast tier inside the transaction (its
     * snapshot then holds them, and an abort takes the copies back), then run the statement there.
     */
    record PromoteThenRun(List<BsonValue> ids, Reason reason) implements TransactionRoute {
        public PromoteThenRun {
            ids = List.copyOf(ids);
            Objects.requireNonNull(reason, "reason");
        }
    }

    /** The statement fails with {@code message}; the client should abort the transaction. */
    record Refused(Reason reason, String message) implements TransactionRoute {
        public Refused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(message, "message");
        }
    }
}
