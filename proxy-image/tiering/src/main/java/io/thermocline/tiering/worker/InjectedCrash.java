package io.thermocline.tiering.worker;

/** Thrown by a test's {@link FaultInjection}: the worker stops at once, as if its process died. */
public final class InjectedCrash extends RuntimeException {
    public InjectedCrash(FaultPoint point) {
        super("injected crash at " + point, null, false, false);
    }
}
