package io.thermocline.tiering.worker;

/**
 * Called by a worker at each {@link FaultPoint}. Production runs {@link #NONE}; tests throw
 * {@link InjectedCrash} to kill the worker exactly there, or run a racing user write.
 */
@FunctionalInterface
public interface FaultInjection {

    FaultInjection NONE = point -> { };

    void reached(FaultPoint point);
}
