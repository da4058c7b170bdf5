package io.thermocline.embedded.storage;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.h2.mvstore.MVStore;

/**
 * Where H2 reports a write to disk that failed, before it closes the store: the replica set's durability listens, so
 * from that moment every write is refused with the disk's own cause, and a command that meets the closed store
 * ("This store is closed", no cause) is answered with it too. And the check that a store is still open before it is
 * flushed: H2's commit of a closed store does nothing and says nothing.
 */
public final class DiskFailures implements Thread.UncaughtExceptionHandler {
    private final List<Consumer<Throwable>> listeners = new CopyOnWriteArrayList<>();
    private volatile Throwable first;

    @Override
    public void uncaughtException(Thread thread, Throwable failure) {
        if (first == null) {
            first = failure;
        }
        listeners.forEach(listener -> listener.accept(failure));
    }

    /** Calls {@code listener} with each later failure, and at once with one seen before it listened. */
    public void listen(Consumer<Throwable> listener) {
        listeners.add(listener);
        Throwable seen = first;
        if (seen != null) {
            listener.accept(seen);
        }
    }

    /**
     * Throws when H2 has closed {@code store} (its commit would return without writing anything): a flush that
     * succeeds on a closed store would let writes be acknowledged that no restart finds.
     */
    public static void requireOpen(MVStore store, String name) {
        if (store.isClosed()) {
            Throwable cause = store.getPanicException();
            throw new IllegalStateException(
                    name + " is closed by its storage engine and cannot be flushed"
                            + (cause == null ? "" : ": " + cause.getMessage()),
                    cause);
        }
    }
}
