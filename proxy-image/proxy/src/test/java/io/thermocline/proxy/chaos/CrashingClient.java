package io.thermocline.proxy.chaos;

import com.mongodb.reactivestreams.client.ClientSession;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.tiering.worker.FaultPoint;
import io.thermocline.tiering.worker.InjectedCrash;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A worker's view of a tier that can die between any two I/O steps: every publisher the worker
 * subscribes to may fail with {@link InjectedCrash} before its command is sent or after its reply
 * arrived (the write then happened, the worker never learns it). Once dead, every later call of
 * this worker fails too, as nothing runs in a killed process; the worker gets fresh clients when
 * it is restarted. Everything else passes through to the real reactive driver.
 */
public final class CrashingClient {

    /** Shared by all the clients of one worker incarnation: they die together. */
    public static final class Life {
        private final BooleanSupplier dieNow;
        private final AtomicBoolean dead = new AtomicBoolean();
        private volatile long diedAt;

        public Life(BooleanSupplier dieNow) {
            this.dieNow = dieNow;
        }

        public boolean dead() {
            return dead.get();
        }

        /** Nanos since the crash, for a supervisor to kill a worker that does not notice it died. */
        public long deadForNanos() {
            return dead.get() ? System.nanoTime() - diedAt : 0;
        }

        /** True when this step is where the worker dies (or it died already). */
        private boolean crashHere() {
            if (dead.get()) {
                return true;
            }
            if (dieNow.getAsBoolean() && dead.compareAndSet(false, true)) {
                diedAt = System.nanoTime();
                return true;
            }
            return false;
        }
    }

    private CrashingClient() {
    }

    public static MongoClient wrap(MongoClient client, Life life) {
        return (MongoClient) proxy(MongoClient.class, client, life);
    }

    private static Object proxy(Class<?> type, Object target, Life life) {
        return Proxy.newProxyInstance(CrashingClient.class.getClassLoader(), new Class<?>[] {type}, new Handler(target, life));
    }

    private static boolean wrapped(Class<?> type) {
        return type.isInterface() && (type == Publisher.class || type.getPackageName().startsWith("com.mongodb.reactivestreams.client"));
    }

    private record Handler(Object target, Life life) implements InvocationHandler {
        @Override
        public Object invoke(Object self, Method method, Object[] args) throws Throwable {
            Object[] real = args == null ? null : args.clone();
            if (real != null) {
                for (int i = 0; i < real.length; i++) {
                    if (real[i] != null && Proxy.isProxyClass(real[i].getClass())
                            && Proxy.getInvocationHandler(real[i]) instanceof Handler h) {
                        real[i] = h.target; // the driver casts sessions to its own classes
                    }
                }
            }
            if (method.getName().equals("subscribe") && real != null && real.length == 1 && target instanceof Publisher<?> publisher) {
                subscribe(publisher, (Subscriber<?>) real[0]);
                return null;
            }
            Object result;
            try {
                result = method.invoke(target, real);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            return result != null && wrapped(method.getReturnType()) ? proxy(method.getReturnType(), result, life) : result;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        private void subscribe(Publisher publisher, Subscriber downstream) {
            if (life.crashHere()) {
                downstream.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                    }

                    @Override
                    public void cancel() {
                    }
                });
                downstream.onError(new InjectedCrash(FaultPoint.BETWEEN_IO_STEPS));
                return;
            }
            publisher.subscribe(new Subscriber() {
                private Subscription upstream;
                private boolean finished;

                @Override
                public void onSubscribe(Subscription subscription) {
                    upstream = subscription;
                    downstream.onSubscribe(subscription);
                }

                @Override
                public void onNext(Object item) {
                    if (finished) {
                        return;
                    }
                    if (life.dead()) {
                        finished = true;
                        upstream.cancel();
                        downstream.onError(new InjectedCrash(FaultPoint.BETWEEN_IO_STEPS));
                        return;
                    }
                    downstream.onNext(item instanceof ClientSession ? proxy(ClientSession.class, item, life) : item);
                }

                @Override
                public void onError(Throwable error) {
                    if (!finished) {
                        finished = true;
                        downstream.onError(error);
                    }
                }

                @Override
                public void onComplete() {
                    if (finished) {
                        return;
                    }
                    finished = true;
                    if (life.crashHere()) {
                        downstream.onError(new InjectedCrash(FaultPoint.BETWEEN_IO_STEPS));
                    } else {
                        downstream.onComplete();
                    }
                }
            });
        }
    }
}
