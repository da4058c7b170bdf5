package io.thermocline.embedded.member;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonDocument;

/**
 * Test hook: a request a slow network delivers late. The next request of a command is held before the member runs
 * it, and runs once released even if its client gave up meanwhile, as a request stuck in a network buffer reaches
 * mongod after the driver's timeout and is executed all the same. (The {@code failCommand} fail point's
 * {@code blockConnection} is not that: it stops when the connection closes.)
 */
public final class DelayedRequests {

    /** A request held on its way to the member. */
    public static final class Held {
        private static final Duration LONGEST = Duration.ofSeconds(60);
        private final String command;
        private final CountDownLatch arrived = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private final CountDownLatch ran = new CountDownLatch(1);
        private volatile BsonDocument reply;

        private Held(String command) {
            this.command = command;
        }

        /** True once the request is held (its client sent it). */
        public boolean awaitArrived(Duration timeout) throws InterruptedException {
            return arrived.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** Delivers it: the member runs it now. */
        public void release() {
            released.countDown();
        }

        /** True once the member ran it (its reply, if anyone still waits for it, is on its way). */
        public boolean awaitRan(Duration timeout) throws InterruptedException {
            return ran.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        /** What the member answered once it ran it (null before, or if it failed without an answer), sent or not. */
        public BsonDocument reply() {
            return reply;
        }
    }

    private final AtomicReference<Held> next = new AtomicReference<>();

    /** Holds the next request of {@code command} (the command's name as sent, e.g. {@code update}). */
    public Held holdNext(String command) {
        Held held = new Held(command);
        next.set(held);
        return held;
    }

    /** Where a request waits if it is the one to hold; the caller reports {@link #ran} after running it. */
    Held pass(String command) {
        Held held = next.get();
        if (held == null || !held.command.equals(command) || !next.compareAndSet(held, null)) {
            return null;
        }
        held.arrived.countDown();
        try {
            held.released.await(
                    Held.LONGEST.toMillis(), TimeUnit.MILLISECONDS); // never longer: a forgotten hold lets it go
        } catch (InterruptedException e) {
            // woken by the member's stop: the request then arrives, late, as the network would deliver it, and runs on
            // a
            // thread that is not interrupted (an interrupt inside H2's file I/O closes the store's file under the
            // command)
        }
        return held;
    }

    void ran(Held held, BsonDocument reply) {
        if (held != null) {
            held.reply = reply;
            held.ran.countDown();
        }
    }
}
