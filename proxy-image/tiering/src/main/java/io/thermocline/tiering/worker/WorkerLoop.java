package io.thermocline.tiering.worker;

import io.thermocline.tiering.reactive.Blocking;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The thread a worker runs on: it calls {@link Step#run()} until closed, backs off and retries
 * after an error (the step resumes from the shared state, so retrying is always safe), and dies
 * without any further write on an {@link InjectedCrash}, like a killed process.
 */
public final class WorkerLoop implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WorkerLoop.class);

    /** One unit of a worker's work; returns how long to pause before the next one. */
    @FunctionalInterface
    public interface Step {
        Duration run() throws Exception;
    }

    private final String name;
    private final Step step;
    private final Duration errorBackoff;
    private final Thread thread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean closing;
    private volatile Throwable crash;
    private boolean started;

    public WorkerLoop(String name, Step step, Duration errorBackoff) {
        this.name = name;
        this.step = step;
        this.errorBackoff = errorBackoff;
        this.thread = new Thread(this::loop, "thermocline-" + name);
        this.thread.setDaemon(true);
    }

    public synchronized WorkerLoop start() {
        started = true;
        thread.start();
        return this;
    }

    private void loop() {
        try {
            while (!closing) {
                Duration pause;
                try {
                    pause = step.run();
                } catch (InjectedCrash e) {
                    crash = e;
                    LOG.info("event=worker_crashed worker={} reason=\"{}\"", name, e.getMessage());
                    return;
                } catch (InterruptedException | Blocking.WorkerInterruptedException e) {
                    return;
                } catch (Exception e) {
                    if (closing) {
                        return;
                    }
                    LOG.warn("event=worker_step_failed worker={} error=\"{}\"", name, e.toString());
                    pause = errorBackoff;
                }
                if (!pause.isZero() && !closing) {
                    Thread.sleep(pause.toMillis());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stopped.countDown();
        }
    }

    /** True while the thread runs (false after close or an injected crash). */
    public boolean running() {
        return stopped.getCount() > 0;
    }

    public Throwable crash() {
        return crash;
    }

    @Override
    public synchronized void close() {
        closing = true;
        if (!started) {
            return;
        }
        thread.interrupt();
        try {
            if (!stopped.await(10, TimeUnit.SECONDS)) {
                LOG.warn("event=worker_stop_slow worker={}", name);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
