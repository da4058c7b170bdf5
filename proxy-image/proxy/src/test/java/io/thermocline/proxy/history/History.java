package io.thermocline.proxy.history;

import java.util.ArrayList;
import com.mongodb.MongoException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoSocketException;
import com.mongodb.MongoTimeoutException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Records operations as clients run them: invoke and completion times from one monotonic clock
 * shared by every thread ({@link System#nanoTime()}), the call and its outcome; an exception is an
 * indeterminate outcome.
 */
final class History {

    private final List<Op> ops = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();

    /** Runs {@code action} and records it; returns its outcome. */
    Outcome run(int process, int session, Call call, Callable<Outcome> action) {
        long invoked = System.nanoTime();
        Outcome outcome;
        try {
            outcome = action.call();
        } catch (Exception e) {
            String code = e instanceof MongoException mongo && mongo.getCode() > 0 ? " (code " + mongo.getCode() + ")" : "";
            outcome = new Outcome.Indeterminate(e.getClass().getSimpleName() + code + ": " + firstLine(e.getMessage()), isTransient(e));
        }
        long completed = System.nanoTime();
        add(new Op(next.getAndIncrement(), process, session, invoked, completed, call, outcome));
        return outcome;
    }

    /** Codes a healthy replica set (or the proxy waiting for the feeder) returns now and then. */
    private static final Set<Integer> TRANSIENT_CODES = Set.of(6, 7, 24, 50, 89, 91, 112, 189, 251, 262, 9001, 10107, 11600,
            11602, 13435, 13436);

    static boolean isTransient(Exception e) {
        if (e instanceof MongoSocketException || e instanceof MongoTimeoutException || e instanceof MongoExecutionTimeoutException) {
            return true;
        }
        if (e instanceof MongoException mongo) {
            return mongo.hasErrorLabel(MongoException.TRANSIENT_TRANSACTION_ERROR_LABEL) || mongo.hasErrorLabel("RetryableWriteError")
                    || TRANSIENT_CODES.contains(mongo.getCode())
                    || (mongo.getCause() instanceof Exception cause && cause != e && isTransient(cause));
        }
        return false;
    }

    private synchronized void add(Op op) {
        ops.add(op);
    }

    synchronized List<Op> ops() {
        return List.copyOf(ops);
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int newline = message.indexOf('\n');
        String line = newline < 0 ? message : message.substring(0, newline);
        return line.length() > 400 ? line.substring(0, 400) + "..." : line;
    }
}
