package io.thermocline.operator.fasttier;

/** Opens a {@link ReplicaSetClient} for one target (hosts and root credentials). */
public interface ReplicaSetConnector {

    ReplicaSetClient connect(ReplicaSetTarget target);
}
