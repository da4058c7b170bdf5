package io.thermocline.operator.status;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * Merges observed conditions into the previous ones: {@code lastTransitionTime} moves only
 * when a condition's status changes, so an unchanged cluster has an unchanged status.
 */
public final class Conditions {

    private Conditions() {
    }

    public static List<Condition> merge(List<Condition> previous, List<Observed> observed, long generation, Instant now) {
        List<Condition> merged = new ArrayList<>();
        String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
        for (Observed o : observed) {
            Condition before = find(previous, o.type());
            String transition = before != null && o.status().name().equals(before.getStatus()) && before.getLastTransitionTime() != null
                    ? before.getLastTransitionTime() : time;
            merged.add(new ConditionBuilder()
                    .withType(o.type().name())
                    .withStatus(o.status().name())
                    .withReason(o.reason())
                    .withMessage(o.message())
                    .withObservedGeneration(generation)
                    .withLastTransitionTime(transition)
                    .build());
        }
        return merged;
    }

    /** Replaces one condition, keeping the others as they were (used when a reconcile fails midway). */
    public static List<Condition> replace(List<Condition> previous, Observed observed, long generation, Instant now) {
        List<Condition> out = new ArrayList<>(merge(previous, List.of(observed), generation, now));
        if (previous != null) {
            previous.stream().filter(c -> !observed.type().name().equals(c.getType())).forEach(out::add);
        }
        return out;
    }

    public static Condition find(List<Condition> conditions, ConditionType type) {
        if (conditions == null) {
            return null;
        }
        return conditions.stream().filter(c -> type.name().equals(c.getType())).findFirst().orElse(null);
    }
}
