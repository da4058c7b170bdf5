package io.thermocline.proxy.fleet;

import java.util.List;

/**
 * How the replicas divide a tier's connection budget (per member, for the whole fleet): the live
 * replicas, sorted by instance id, each take {@code budget / n}, the first {@code budget % n} one more,
 * so the shares add up to the budget exactly. A replica shrinks to a smaller share at once; it grows
 * only when every live replica sees the same set of replicas, and only into what the others do not hold,
 * so during a scale event the fleet never holds more than the budget.
 */
public final class ConnectionBudget {

    private ConnectionBudget() {
    }

    /** {@code self}'s share of {@code budget} among {@code live} (sorted, {@code self} included). */
    public static int share(int budget, List<String> live, String self) {
        int n = live.size();
        int rank = live.indexOf(self);
        if (n == 0 || rank < 0) {
            return budget;
        }
        return budget / n + (rank < budget % n ? 1 : 0);
    }

    /**
     * The limit to apply now.
     *
     * @param current    this replica's limit now
     * @param share      its share under its own view of the live replicas
     * @param othersHeld what the other live replicas hold (limit, or more while their shrink is under way)
     * @param agreed     whether every live replica reported the same view as this one
     */
    public static int next(int budget, int current, int share, int othersHeld, boolean agreed) {
        if (share <= current) {
            return share;
        }
        if (!agreed) {
            return current;
        }
        return Math.max(current, Math.min(share, budget - othersHeld));
    }
}
