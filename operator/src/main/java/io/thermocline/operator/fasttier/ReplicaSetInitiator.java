package io.thermocline.operator.fasttier;

/**
 * Brings the fast-tier replica set one safe step closer to its target: initiate it, then
 * add or remove one member per call. Safe to call again at any point.
 */
public interface ReplicaSetInitiator {

    ReplicaSetState ensure(ReplicaSetTarget target);
}
