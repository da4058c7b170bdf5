package io.thermocline.operator.backup;

/** How a Job the operator started for a backup point or a restore step stands, as the informer cache shows it. */
public sealed interface JobRun {

    /** No such Job: not started yet, or deleted (a failed step's Job deleted by the user runs again). */
    record Absent() implements JobRun {}

    record Running() implements JobRun {}

    /** {@code output}: its container's termination message (null when none was read). */
    record Succeeded(String output) implements JobRun {}

    /** {@code output}: its last pod's termination message, or the Job's own failure reason. */
    record Failed(String output) implements JobRun {}

    JobRun ABSENT = new Absent();
    JobRun RUNNING = new Running();
}
