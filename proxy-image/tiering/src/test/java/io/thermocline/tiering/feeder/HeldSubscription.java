package io.thermocline.tiering.feeder;

import com.mongodb.client.model.WriteModel;
import com.mongodb.reactivestreams.client.MongoClient;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.reactivestreams.Publisher;

/**
 * A race point in a worker's driver calls: the first call that matches (an archive bulk write with a
 * delete in it, the change stream's {@code watch}) is held when the worker subscribes to it, before
 * anything is sent, until the test releases it. The worker's thread waits there as if the server were
 * slow, and the test acts (writes, probes, reads) at exactly that step.
 */
final class HeldSubscription {

    private final MongoClient client;
    private final Predicate<Call> matches;
    private final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    /** A driver call: the object called, its method's name and arguments. */
    record Call(Object target, String method, Object[] args) {
        List<?> list() {
            return args == null ? null : Arrays.stream(args).filter(List.class::isInstance).map(List.class::cast).findFirst().orElse(null);
        }
    }

    private HeldSubscription(MongoClient target, Predicate<Call> matches) {
        this.matches = matches;
        this.client = (MongoClient) wrap(MongoClient.class, target, false);
    }

    /** Holds the first bulk write with a model of {@code type} in it. */
    static HeldSubscription firstBulkWriteWithA(Class<? extends WriteModel> type, MongoClient archive) {
        return new HeldSubscription(archive, call -> call.method().equals("bulkWrite") && call.list() != null
                && call.list().stream().anyMatch(type::isInstance));
    }

    /** Holds the first change stream opened: nothing is read from it (no getMore, no lookup) until released. */
    static HeldSubscription firstChangeStream(MongoClient fast) {
        return new HeldSubscription(fast, call -> call.method().equals("watch"));
    }

    /** Holds the first {@code find} on {@code namespace} (a scan of the collection). */
    static HeldSubscription firstFindOn(String namespace, MongoClient fast) {
        return new HeldSubscription(fast, call -> call.method().equals("find")
                && call.target() instanceof com.mongodb.reactivestreams.client.MongoCollection<?> collection
                && collection.getNamespace().getFullName().equals(namespace));
    }

    MongoClient client() {
        return client;
    }

    /** True once the held call waits (nothing of it has reached the server). */
    boolean awaitHeld(Duration timeout) throws InterruptedException {
        return reached.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    void release() {
        released.countDown();
    }

    private Object wrap(Class<?> type, Object target, boolean armed) {
        InvocationHandler handler = (self, method, args) -> invoke(target, armed, method, args);
        return Proxy.newProxyInstance(HeldSubscription.class.getClassLoader(), new Class<?>[] {type}, handler);
    }

    @SuppressWarnings("unchecked")
    private Object invoke(Object target, boolean armed, Method method, Object[] args) throws Throwable {
        if (armed && method.getName().equals("subscribe") && args != null && args.length == 1 && reached.getCount() > 0) {
            reached.countDown();
            if (!released.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the held call was never released");
            }
        }
        Object result;
        try {
            result = method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
        Class<?> returned = method.getReturnType();
        boolean arm = armed || (reached.getCount() > 0 && matches.test(new Call(target, method.getName(), args)));
        if (result != null && returned.isInterface()
                && (returned.getPackageName().equals("com.mongodb.reactivestreams.client") || arm && returned == Publisher.class)) {
            return wrap(returned, result, arm && Publisher.class.isAssignableFrom(returned));
        }
        return result;
    }
}
