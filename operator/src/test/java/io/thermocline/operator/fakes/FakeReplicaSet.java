package io.thermocline.operator.fakes;

import io.quarkus.test.Mock;
import io.thermocline.operator.fasttier.ReplicaSetInitiator;
import io.thermocline.operator.fasttier.ReplicaSetState;
import io.thermocline.operator.fasttier.ReplicaSetTarget;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A replica set that converges at once and remembers every target it was asked for. */
@Mock
@ApplicationScoped
public class FakeReplicaSet implements ReplicaSetInitiator {

    private final List<ReplicaSetTarget> targets = new CopyOnWriteArrayList<>();
    private final java.util.concurrent.atomic.AtomicInteger stepsLeft = new java.util.concurrent.atomic.AtomicInteger();

    public List<ReplicaSetTarget> targets() {
        return targets;
    }

    public void reset() {
        targets.clear();
        stepsLeft.set(0);
    }

    /** The next {@code steps} calls answer "still removing a member", like a real multi-step reconfiguration. */
    public void convergeAfter(int steps) {
        stepsLeft.set(steps);
    }

    @Override
    public ReplicaSetState ensure(ReplicaSetTarget target) {
        targets.add(target);
        if (stepsLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return new ReplicaSetState.Converging("RemovingMember", "removing a member");
        }
        return new ReplicaSetState.Converged(target.members());
    }
}
