package io.thermocline.tiering.reactive;

import com.mongodb.MongoTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Waits for a reactive-streams publisher from a worker thread. The workers are sequential by
 * design (each step depends on the acknowledgement of the previous one), so a blocking adapter
 * keeps their ordering visible in the code; the driver itself stays fully asynchronous.
 */
public final class Blocking {

    /** How long one driver call may take before the worker gives up on it. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private Blocking() {
    }

    /** Every element the publisher emits, in order. */
    public static <T> List<T> list(Publisher<T> publisher) {
        return list(publisher, DEFAULT_TIMEOUT);
    }

    public static <T> List<T> list(Publisher<T> publisher, Duration timeout) {
        CompletableFuture<List<T>> done = new CompletableFuture<>();
        List<T> items = Collections.synchronizedList(new ArrayList<>());
        publisher.subscribe(new Subscriber<T>() {
            @Override
            public void onSubscribe(Subscription subscription) {
                subscription.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(T item) {
                items.add(item);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }

            @Override
            public void onComplete() {
                done.complete(List.copyOf(items));
            }
        });
        return await(done, timeout);
    }

    /** The single result of a one-shot operation (insertOne, bulkWrite, startSession...). */
    public static <T> Optional<T> single(Publisher<T> publisher) {
        List<T> items = list(publisher, DEFAULT_TIMEOUT);
        return items.isEmpty() ? Optional.empty() : Optional.of(items.get(0));
    }

    /** Runs an operation that completes without a value (commitTransaction...). */
    public static void run(Publisher<?> publisher) {
        list(publisher, DEFAULT_TIMEOUT);
    }

    private static <T> T await(CompletableFuture<T> future, Duration timeout) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new WorkerInterruptedException(e);
        } catch (TimeoutException e) {
            throw new MongoTimeoutException("no answer from the database within " + timeout);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(cause);
        }
    }

    /** The worker's thread was interrupted while it waited: it is being stopped. */
    public static final class WorkerInterruptedException extends RuntimeException {
        public WorkerInterruptedException(InterruptedException cause) {
            super("worker interrupted", cause);
        }
    }
}
