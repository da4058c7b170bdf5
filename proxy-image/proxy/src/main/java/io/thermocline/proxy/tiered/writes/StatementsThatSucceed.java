package io.thermocline.proxy.tiered.writes;

import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.TierLagging;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.function.UnaryOperator;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * A write of several statements (an insert's {@code documents}, an update's {@code updates}) in a guarded
 * transaction: a write error aborts the transaction, so nothing of it stands, while one database would have
 * applied the statements before the error (ordered) or all the others (unordered). So the statements that failed
 * are taken out and the rest runs again, until a run has no write error; the client gets that run's reply with the
 * failed statements' errors at their own indexes.
 */
final class StatementsThatSucceed {

    /** One guarded run of {@code command}; a committing reply passes through {@code finish} inside the transaction. */
    @FunctionalInterface
    interface GuardedRun {
        BsonDocument once(BsonDocument command, UnaryOperator<BsonDocument> finish) throws InterruptedException;
    }

    private StatementsThatSucceed() {}

    /**
     * Runs the statements of {@code command}'s {@code field} through {@code guarded} until a run has no write error;
     * {@code complete} makes the client's reply (inside the committing transaction when one commits).
     */
    static BsonDocument run(
            String namespace,
            BsonDocument command,
            String field,
            UnaryOperator<BsonDocument> complete,
            GuardedRun guarded)
            throws InterruptedException {
        BsonArray statements = command.getArray(field);
        boolean ordered = command.getBoolean("ordered", BsonBoolean.TRUE).getValue();
        List<Integer> live = new ArrayList<>();
        for (int i = 0; i < statements.size(); i++) {
            live.add(i);
        }
        List<BsonDocument> errors = new ArrayList<>();
        for (int round = 0; round <= statements.size(); round++) {
            if (live.isEmpty()) {
                BsonDocument none = new BsonDocument("n", new BsonInt32(0));
                if (field.equals("updates")) {
                    none.append("nModified", new BsonInt32(0));
                }
                return complete.apply(withErrors(
                        none.append("ok", new BsonDouble(1)), errors, live)); // nothing ran: nothing to record
            }
            BsonArray subset = new BsonArray();
            live.forEach(i -> subset.add(statements.get(i)));
            BsonDocument attempt = Replies.mutable(command);
            attempt.put(field, subset);
            List<BsonDocument> failedBefore = List.copyOf(errors);
            List<Integer> running = List.copyOf(live);
            // the reply is completed inside the committing transaction, so the retryable record holds it whole
            boolean[] committed = new boolean[1];
            BsonDocument answer = guarded.once(attempt, reply -> {
                committed[0] = true;
                return complete.apply(failedBefore.isEmpty() ? reply : withErrors(reply, failedBefore, running));
            });
            if (committed[0]) {
                return answer;
            }
            if (!Replies.isOk(answer)
                    || !answer.isArray("writeErrors")
                    || answer.getArray("writeErrors").isEmpty()) {
                return complete.apply(answer);
            }
            List<Integer> failed = new ArrayList<>();
            for (BsonValue error : answer.getArray("writeErrors")) {
                failed.add(error.asDocument().getNumber("index").intValue());
            }
            Collections.sort(failed);
            if (ordered) {
                // the first error ends an ordered write: only the statements before it ran
                int first = failed.get(0);
                errors.clear();
                errors.add(renumbered(errorAt(answer, first), live.get(first)));
                live = new ArrayList<>(live.subList(0, first));
            } else {
                for (int i = failed.size() - 1; i >= 0; i--) {
                    int index = failed.get(i);
                    errors.add(renumbered(errorAt(answer, index), live.get(index)));
                    live.remove(index);
                }
            }
        }
        throw new TierLagging("the statements of this write on " + namespace + " kept failing differently; retry");
    }

    private static BsonDocument errorAt(BsonDocument reply, int index) {
        for (BsonValue error : reply.getArray("writeErrors")) {
            if (error.asDocument().getNumber("index").intValue() == index) {
                return error.asDocument();
            }
        }
        throw new IllegalStateException("no write error at " + index);
    }

    private static BsonDocument renumbered(BsonDocument indexed, int index) {
        BsonDocument copy = Replies.mutable(indexed);
        copy.put("index", new BsonInt32(index));
        return copy;
    }

    /** The reply of the statements that ran ({@code live}: their indexes in the client's command), with the others' errors. */
    private static BsonDocument withErrors(BsonDocument reply, List<BsonDocument> errors, List<Integer> live) {
        BsonDocument out = Replies.mutable(reply);
        if (out.isArray("upserted")) {
            BsonArray upserted = new BsonArray();
            for (BsonValue u : out.getArray("upserted")) {
                upserted.add(renumbered(
                        u.asDocument(),
                        live.get(u.asDocument().getNumber("index").intValue())));
            }
            out.put("upserted", upserted);
        }
        List<BsonDocument> sorted = new ArrayList<>(errors);
        sorted.sort(Comparator.comparingInt(e -> e.getNumber("index").intValue()));
        if (!sorted.isEmpty()) {
            out.put("writeErrors", new BsonArray(sorted));
        }
        return out;
    }
}
