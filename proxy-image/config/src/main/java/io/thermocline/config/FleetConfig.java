package io.thermocline.config;

/**
 * This proxy's place in the fleet: how many replicas share the connection budget, its
 * own id (encoded in the cursor ids it hands out), and where its peers are found.
 */
public record FleetConfig(int replicas, String instanceId, String peerService, int peerPort) {

    /** This instance's share of a tier's connection budget, at least one connection. */
    public int poolSize(TierConfig tier) {
        return Math.max(1, (tier.connectionBudget() + replicas - 1) / replicas);
    }
}
