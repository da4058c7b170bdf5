package io.thermocline.operator.backup;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.operator.api.v1alpha1.RestoreSpec;
import io.thermocline.operator.api.v1alpha1.RestoreStatus;
import io.thermocline.operator.api.v1alpha1.RestoreStep;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link RestoreSteps}: the step a spec.restore takes from the last status and its Jobs, as a table. */
@Timeout(10)
class RestoreStepsTest {

    private static final Instant NOW = Instant.parse("2026-12-07T01:00:00Z");
    private static final JobRun OK = new JobRun.Succeeded(null);
    private static final JobRun FAILED =
            new JobRun.Failed("restore-sync: refused: the fleet is not held for a restore");

    /** spec step, previous state (null: none; same name), hold Job, step Job, warmer Job, fleet Restoring -> state, Job to start. */
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        RestoreStep.HOLD,
                        null,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        false,
                        "Holding",
                        RestoreStep.HOLD),
                Arguments.of(
                        RestoreStep.HOLD,
                        "Holding",
                        JobRun.RUNNING,
                        JobRun.RUNNING,
                        JobRun.ABSENT,
                        false,
                        "Holding",
                        null),
                Arguments.of(RestoreStep.HOLD, "Holding", OK, OK, JobRun.ABSENT, true, "Held", null),
                // a settled step stays when its Job is gone (a TTL, a user)
                Arguments.of(RestoreStep.HOLD, "Held", JobRun.ABSENT, JobRun.ABSENT, JobRun.ABSENT, true, "Held", null),
                // a failed step runs again once its Job is deleted
                Arguments.of(
                        RestoreStep.HOLD,
                        "Failed",
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        false,
                        "Holding",
                        RestoreStep.HOLD),
                Arguments.of(RestoreStep.HOLD, "Holding", FAILED, FAILED, JobRun.ABSENT, false, "Failed", null),
                // resync or cancel never start while the hold still runs (the last feeder's lease may not have ended)
                Arguments.of(
                        RestoreStep.RESYNC,
                        "Holding",
                        JobRun.RUNNING,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        true,
                        "Holding",
                        null),
                Arguments.of(
                        RestoreStep.CANCEL,
                        "Holding",
                        JobRun.RUNNING,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        true,
                        "Holding",
                        null),
                Arguments.of(
                        RestoreStep.RESYNC,
                        "Held",
                        OK,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        true,
                        "Resyncing",
                        RestoreStep.RESYNC),
                // a resync of a fleet nobody held is refused before any Job; one held by the CLI (status lost) is not
                Arguments.of(
                        RestoreStep.RESYNC, null, JobRun.ABSENT, JobRun.ABSENT, JobRun.ABSENT, false, "Failed", null),
                Arguments.of(
                        RestoreStep.RESYNC,
                        null,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        true,
                        "Resyncing",
                        RestoreStep.RESYNC),
                Arguments.of(RestoreStep.RESYNC, "Resyncing", OK, OK, JobRun.ABSENT, false, "Warming", null),
                Arguments.of(RestoreStep.RESYNC, "Warming", OK, OK, JobRun.RUNNING, false, "Warming", null),
                Arguments.of(RestoreStep.RESYNC, "Warming", OK, JobRun.ABSENT, OK, false, "Restored", null),
                Arguments.of(RestoreStep.RESYNC, "Warming", OK, OK, FAILED, false, "Failed", null),
                Arguments.of(
                        RestoreStep.CANCEL,
                        "Held",
                        OK,
                        JobRun.ABSENT,
                        JobRun.ABSENT,
                        true,
                        "Cancelling",
                        RestoreStep.CANCEL),
                Arguments.of(RestoreStep.CANCEL, "Cancelling", OK, OK, JobRun.ABSENT, false, "Cancelled", null));
    }

    @ParameterizedTest(name = "{0} after {1} (hold {2}, step {3}, warmer {4}, restoring {5}) -> {6}")
    @MethodSource("cases")
    void eachStepFollowsItsJobs(
            RestoreStep step,
            String before,
            JobRun hold,
            JobRun run,
            JobRun warmer,
            boolean restoring,
            String state,
            RestoreStep start) {
        // a hold's states were reached under step hold, whatever step is asked now
        RestoreStep stepBefore = "Holding".equals(before) || "Held".equals(before) ? RestoreStep.HOLD : step;
        RestoreSteps.Step decided = RestoreSteps.decide(
                new RestoreSpec("r1", step),
                previous("r1", stepBefore, before),
                jobs(hold, run, warmer),
                restoring,
                NOW);
        assertThat(decided.status().state).isEqualTo(state);
        assertThat(decided.start()).isEqualTo(start);
        assertThat(decided.holdsModeRequests())
                .as("the restore owns the mode until done")
                .isEqualTo(!state.equals("Restored") && !state.equals("Cancelled"));
    }

    @Test
    void theResyncNamesTheWarmerAfterTheRestoreAndKeepsThatNameAcrossLaterRestores() {
        RestoreSteps.Step resynced = RestoreSteps.decide(
                new RestoreSpec("r1", RestoreStep.RESYNC),
                previous("r1", RestoreStep.RESYNC, "Resyncing"),
                jobs(OK, OK, JobRun.ABSENT),
                false,
                NOW);
        assertThat(resynced.lastResynced()).isEqualTo("r1");
        assertThat(resynced.status().job).isEqualTo("warmer-r1");

        RestoreSteps.Step next = RestoreSteps.decide(
                new RestoreSpec("r2", RestoreStep.HOLD),
                resynced.status(),
                jobs(JobRun.ABSENT, JobRun.ABSENT, JobRun.ABSENT),
                false,
                NOW);
        assertThat(next.status().state).isEqualTo("Holding");
        assertThat(next.lastResynced())
                .as("r2 has not emptied the fast tier yet")
                .isEqualTo("r1");
    }

    @Test
    void aRemovedSpecLeavesTheRestoreWhereItIsAndAFailedOneNoLongerHoldsTheMode() {
        RestoreSteps.Step held = RestoreSteps.decide(
                null, previous("r1", RestoreStep.HOLD, "Held"), jobs(OK, OK, JobRun.ABSENT), true, NOW);
        assertThat(held.status().state).isEqualTo("Held");
        assertThat(held.holdsModeRequests()).isTrue();
        assertThat(held.condition().reason()).isEqualTo("RestoreHeld");

        RestoreSteps.Step failed = RestoreSteps.decide(
                null, previous("r1", RestoreStep.HOLD, "Failed"), jobs(FAILED, FAILED, JobRun.ABSENT), false, NOW);
        assertThat(failed.status().state).isEqualTo("Failed");
        assertThat(failed.holdsModeRequests()).as("given up with the spec").isFalse();

        assertThat(RestoreSteps.decide(null, null, jobs(OK, OK, OK), false, NOW))
                .satisfies(s -> {
                    assertThat(s.status()).isNull();
                    assertThat(s.condition()).isNull();
                    assertThat(s.holdsModeRequests()).isFalse();
                });
    }

    @Test
    void aNewNameStartsANewRestoreAndStateTimesMoveOnlyOnAChange() {
        RestoreStatus before = previous("r1", RestoreStep.HOLD, "Held");
        before.since = "2026-12-06T00:00:00Z";
        assertThat(RestoreSteps.decide(
                                new RestoreSpec("r1", RestoreStep.HOLD), before, jobs(OK, OK, JobRun.ABSENT), true, NOW)
                        .status()
                        .since)
                .isEqualTo("2026-12-06T00:00:00Z");
        RestoreSteps.Step other = RestoreSteps.decide(
                new RestoreSpec("r2", RestoreStep.HOLD),
                before,
                jobs(JobRun.ABSENT, JobRun.ABSENT, JobRun.ABSENT),
                true,
                NOW);
        assertThat(other.start()).isEqualTo(RestoreStep.HOLD);
        assertThat(other.status().since).isEqualTo("2026-12-07T01:00:00Z");
    }

    private static RestoreStatus previous(String name, RestoreStep step, String state) {
        if (state == null) {
            return null;
        }
        RestoreStatus s = new RestoreStatus();
        s.name = name;
        s.step = step.value();
        s.state = state;
        s.lastResynced = state.equals("Warming") ? name : null;
        return s;
    }

    private static RestoreSteps.Jobs jobs(JobRun hold, JobRun step, JobRun warmer) {
        return new RestoreSteps.Jobs(
                s -> "job-" + s.value(), s -> s == RestoreStep.HOLD ? hold : step, r -> "warmer-" + r, r -> warmer);
    }
}
