package io.thermocline.operator.fakes;

import io.quarkus.test.Mock;
import io.thermocline.operator.fasttier.ReplicaSetClient;
import io.thermocline.operator.fasttier.ReplicaSetConnector;
import io.thermocline.operator.fasttier.ReplicaSetTarget;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The operator's replica-set access in the Quarkus tests: one {@link ReplicaSetModel} per
 * replica set (keyed by namespace and name), with every target the operator asked for kept.
 */
@Mock
@ApplicationScoped
public class FakeReplicaSet implements ReplicaSetConnector {

    private final List<ReplicaSetTarget> targets = new CopyOnWriteArrayList<>();
    private final Map<String, ReplicaSetModel> models = new ConcurrentHashMap<>();

    public List<ReplicaSetTarget> targets() {
        return targets;
    }

    public void reset() {
        targets.clear();
        models.clear();
    }

    /** The model of {@code NAME-fast} in {@code namespace}, made on first use. */
    public ReplicaSetModel model(String namespace, String cluster) {
        return models.computeIfAbsent(namespace + "/" + cluster + "-fast", k -> new ReplicaSetModel());
    }

    @Override
    public ReplicaSetClient connect(ReplicaSetTarget target) {
        targets.add(target);
        String host = target.podHosts().get(0);
        String namespace = host.split("\\.")[2];
        String cluster = target.replicaSetName().substring(0, target.replicaSetName().length() - "-fast".length());
        return model(namespace, cluster).connect(target);
    }
}
