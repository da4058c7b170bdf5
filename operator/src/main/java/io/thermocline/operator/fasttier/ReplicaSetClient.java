package io.thermocline.operator.fasttier;

import io.thermocline.operator.credentials.FastTierUser;

/**
 * The replica-set commands the operator runs, for one reconcile step (close it after). The
 * MongoDB implementation is {@link MongoReplicaSetConnector}; tests use a member-state model.
 * Every method may throw {@link Unavailable} when the members cannot be reached or refuse.
 */
public interface ReplicaSetClient extends AutoCloseable {

    /** {@code hello} + {@code buildInfo} on one member, directly; never throws: an unreachable member says so. */
    MemberView member(String host);

    /** {@code replSetInitiate} on {@code host} with that member alone. */
    void initiate(String host, String replicaSetName);

    /** {@code replSetGetConfig} through the primary. */
    ReplicaSetConfig config();

    /** {@code replSetReconfig} through the primary: only the members (and version) differ from {@link #config()}. */
    void reconfigure(ReplicaSetConfig next);

    /**
     * Each member's state as the primary's {@code replSetGetStatus} reports it ({@code stateStr}: STARTUP,
     * STARTUP2, RECOVERING, SECONDARY, ...), by host. STARTUP2 is an initial sync: what a member in the
     * configuration does only when its data is gone (a restarted member with data loads its config and recovers).
     */
    java.util.Map<String, String> memberStates();

    /** {@code replSetStepDown} on the primary, so an election picks another member before this one goes. */
    void stepDown();

    /** The featureCompatibilityVersion (major.minor), read on the primary. */
    String featureCompatibilityVersion();

    void setFeatureCompatibilityVersion(String majorMinor);

    /**
     * Creates the user (and its custom role) unless it exists, or gives an existing one exactly these roles and
     * privileges (a changed list of tiered collections); an existing user's password is left as it is.
     */
    void ensureUser(FastTierUser user);

    @Override
    void close();

    /** The replica set cannot be reached or refused a command; the message never holds credentials. */
    final class Unavailable extends RuntimeException {
        public Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
