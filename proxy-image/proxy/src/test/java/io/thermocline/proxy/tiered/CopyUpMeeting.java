package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.tiered.writes.WriteRaces;
import io.thermocline.tiering.provenance.CopyUp;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A user write through the proxy and a copy-up (warm copy, promotion) made to meet at one place, never by
 * timing: the copy-up runs when the write reaches a point of the write path ({@link WriteRaces}), or the
 * write runs when the copy-up reaches one of its points ({@link FaultPoint}). Each run checks that they met,
 * so a race test that uses it cannot pass without its race, however loaded the machine.
 */
final class CopyUpMeeting {

    /** Where the two meet: the copy-up runs at the write's {@code write}, or the write at the copy-up's {@code copy}. */
    record Point(WriteRaces.Point write, FaultPoint copy) {
        static Point copyUpAt(WriteRaces.Point point) {
            return new Point(point, null);
        }

        static Point writeAt(FaultPoint point) {
            return new Point(null, point);
        }

        @Override
        public String toString() {
            return write != null ? "copy-up at the write's " + write : "write at the copy-up's " + copy;
        }
    }

    /** What the write returned and what the copy-up copied. */
    record Met<T>(T written, CopyUp.Result copied) {}

    /** Runs a copy-up whose fault points are the ones given to this meeting's {@link #faults()}. */
    @FunctionalInterface
    interface CopyStep {
        CopyUp.Result copy() throws InterruptedException;
    }

    private final TieredStack stack;
    private final AtomicReference<FaultInjection> copyFaults = new AtomicReference<>(FaultInjection.NONE);

    CopyUpMeeting(TieredStack stack) {
        this.stack = stack;
    }

    /** The fault injection to build the test's {@link CopyUp} with. */
    FaultInjection faults() {
        return point -> copyFaults.get().reached(point);
    }

    /**
     * Runs {@code write} and {@code copy} so that they meet at {@code at}, and checks they did; where the copy-up
     * runs inside the write, it must have copied something (or the write met nothing).
     */
    <T> Met<T> run(Point at, CopyStep copy, Callable<T> write) throws Exception {
        AtomicBoolean met = new AtomicBoolean();
        try {
            if (at.write() != null) {
                AtomicReference<CopyUp.Result> copied = new AtomicReference<>();
                stack.writeRaces.set(point -> {
                    if (point == at.write() && met.compareAndSet(false, true)) {
                        try {
                            copied.set(copy.copy());
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                });
                T written = write.call();
                assertThat(met).as("the write reached %s", at.write()).isTrue();
                assertThat(copied.get().copied())
                        .as("documents the copy-up brought in while the write ran")
                        .isPositive();
                return new Met<>(written, copied.get());
            }
            AtomicReference<T> written = new AtomicReference<>();
            AtomicReference<Exception> failed = new AtomicReference<>();
            copyFaults.set(point -> {
                if (point == at.copy() && met.compareAndSet(false, true)) {
                    try {
                        written.set(write.call());
                    } catch (Exception e) {
                        failed.set(e);
                    }
                }
            });
            CopyUp.Result copied = copy.copy();
            assertThat(met).as("the copy-up reached %s", at.copy()).isTrue();
            if (failed.get() != null) {
                throw failed.get();
            }
            return new Met<>(written.get(), copied);
        } finally {
            stack.writeRaces.set(WriteRaces.NONE);
            copyFaults.set(FaultInjection.NONE);
        }
    }
}
