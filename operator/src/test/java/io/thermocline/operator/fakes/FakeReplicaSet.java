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

    public List<ReplicaSetTarget> targets() {
        return targets;
    }

    public void reset() {
        targets.clear();
    }

    @Override
    public ReplicaSetState ensure(ReplicaSetTarget target) {
        targets.add(target);
        return new ReplicaSetState.Converged(target.members());
    }
}
