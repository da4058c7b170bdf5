package io.thermocline.config;

import java.util.List;

/**
 * This proxy's place in the fleet: how many replicas share the connection budget, its
 * own id (encoded in the cursor ids it hands out), and where its peers are found.
 *
 * @param peerService DNS name listing every replica (the operator's headless Service), or null
 * @param peerPort    where replicas listen for each other's peer link
 * @param peers       a static list of peers' {@code host:port} instead of DNS, or null
 * @param secretFile  the cluster secret every replica shares: the peer link accepts only holders of it
 * @param peerConnections the most connections a replica opens to each peer for forwarded cursor commands
 *                    (a forwarded awaitData getMore holds one while it waits); more wait, then fail retryably
 */
public record FleetConfig(int replicas, String instanceId, String peerService, int peerPort, List<String> peers,
                          String secretFile, int peerConnections) {
    public static final int DEFAULT_PEER_CONNECTIONS = 32;

    public FleetConfig(int replicas, String instanceId, String peerService, int peerPort) {
        this(replicas, instanceId, peerService, peerPort, null, null);
    }

    public FleetConfig(int replicas, String instanceId, String peerService, int peerPort, List<String> peers, String secretFile) {
        this(replicas, instanceId, peerService, peerPort, peers, secretFile, DEFAULT_PEER_CONNECTIONS);
    }

    /** Whether peers are named (by DNS or a list). */
    public boolean namesPeers() {
        return (peerService != null && !peerService.isBlank()) || (peers != null && !peers.isEmpty());
    }

    /**
     * Whether this replica links to its peers: they are named and the cluster secret is given. Then the
     * live count, not {@code replicas}, divides the budgets, and cursors are forwarded to their owner.
     */
    public boolean hasPeers() {
        return namesPeers() && secretFile != null && !secretFile.isBlank();
    }

    /** This instance's share of a tier's connection budget, at least one connection. */
    public int poolSize(TierConfig tier) {
        return Math.max(1, (tier.connectionBudget() + replicas - 1) / replicas);
    }
}
