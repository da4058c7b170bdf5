package io.thermocline.operator.status;

/** One observed condition before it is merged into the status. */
public record Observed(ConditionType type, Status status, String reason, String message) {

    /** Kubernetes condition status values. */
    public enum Status { True, False, Unknown }

    public static Observed isTrue(ConditionType type, String reason, String message) {
        return new Observed(type, Status.True, reason, message);
    }

    public static Observed isFalse(ConditionType type, String reason, String message) {
        return new Observed(type, Status.False, reason, message);
    }

    public static Observed unknown(ConditionType type, String reason, String message) {
        return new Observed(type, Status.Unknown, reason, message);
    }

    public boolean holds() {
        return status == Status.True;
    }
}
