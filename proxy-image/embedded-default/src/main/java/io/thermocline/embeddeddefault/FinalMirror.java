package io.thermocline.embeddeddefault;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.tiering.feeder.Feeder;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import org.bson.BsonTimestamp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stack's last word on the writes only the fast tier holds: at stop, after the proxy drained, the feeder gets
 * time to mirror every fast-tier write; what it could not (writes after its checkpoint, dead letters the archive
 * refused) is named, with where it is kept: on disk until the next start, or lost with an in-memory fast tier.
 */
final class FinalMirror {

    // the stack's logger: these are the stack's stop events
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedStack.class);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final EmbeddedReplicaSet fast;
    private final Feeder feeder;
    /** "in memory", or the fast tier's directory. */
    private final String fastWhere;
    /** Why a tier refuses writes, if one does: the feeder cannot checkpoint then, so there is nothing to wait for. */
    private final Supplier<Optional<String>> writesRefused;
    /** Where the person who stopped the stack reads (null: the log only). */
    private final PrintWriter out;

    FinalMirror(
            EmbeddedReplicaSet fast,
            Feeder feeder,
            String fastWhere,
            Supplier<Optional<String>> writesRefused,
            PrintWriter out) {
        this.fast = fast;
        this.feeder = feeder;
        this.fastWhere = fastWhere;
        this.writesRefused = writesRefused;
        this.out = out;
    }

    /** Waits for the feeder to mirror the fast tier's last write, then warns of what only the fast tier holds. */
    void awaitThenWarn() {
        awaitMirrored();
        warnOfDeadLetters();
    }

    private void awaitMirrored() {
        BsonTimestamp last = fast.lastOperationTime();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline
                && feeder.running()
                && writesRefused.get().isEmpty()) {
            // mirrored-through, or past it while a dead letter holds it (the warning below names those)
            if (feeder.appliedExceptDeadLetters(last)) {
                return;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        LOG.warn(
                "event=embedded_stop_unmirrored last_fast_write={} fast_tier=\"{}\" detail=\"the feeder did not mirror every fast-tier write "
                        + "({}); {}\"",
                last,
                fastWhere,
                writesRefused.get().orElse("within " + WAIT.toSeconds() + " s"),
                fastWhere.equals("in memory")
                        ? "writes after its checkpoint are lost with the in-memory fast tier"
                        : "the fast tier keeps them on disk and the feeder mirrors them after the next start");
    }

    /** Dead letters are acknowledged writes the archive refused: only the fast tier holds them, so a stop says where. */
    private void warnOfDeadLetters() {
        long letters;
        try (MongoClient client = MongoClients.create(fast.connectionString())) {
            letters = client.getDatabase("thermocline")
                    .getCollection("deadLetters")
                    .countDocuments();
        } catch (RuntimeException e) {
            LOG.warn("event=embedded_stop_dead_letters_unknown error=\"{}\"", e.toString());
            return;
        }
        if (letters == 0) {
            return;
        }
        String kept = fastWhere.equals("in memory")
                ? "LOST with the in-memory fast tier (run without --fast-tier-in-memory to keep them)"
                : "kept in the fast tier on disk (" + fastWhere + "); the feeder retries them after the next start";
        LOG.warn(
                "event=embedded_stop_dead_letters count={} detail=\"{} acknowledged write(s) the archive refused are {}\"",
                letters,
                letters,
                kept);
        if (out != null) {
            out.printf("warning: %d acknowledged write(s) the archive refused (dead letters) are %s%n", letters, kept);
            out.flush();
        }
    }
}
