package io.thermocline.proxy.fleet;

import io.thermocline.config.FleetConfig;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Where this replica finds its peers and listens for them; null in the server's settings when it has none (a single
 * proxy, or a fleet sized by {@code fleet.replicas} alone).
 *
 * @param peers      every replica's peer address, this one's included or not (DNS of the headless Service, or a list)
 * @param secretFile the cluster secret shared by the fleet's replicas
 * @param peerConnections the most connections this replica opens to each peer for forwarded cursor commands
 */
public record FleetSettings(
        String listenHost, int peerPort, PeerAddresses peers, Path secretFile, int peerConnections) {
    public FleetSettings(String listenHost, int peerPort, PeerAddresses peers, Path secretFile) {
        this(listenHost, peerPort, peers, secretFile, FleetConfig.DEFAULT_PEER_CONNECTIONS);
    }

    /** The settings {@code fleet} asks for, listening on {@code listenHost} (the client port's host). */
    public static FleetSettings of(String listenHost, FleetConfig fleet) {
        return new FleetSettings(
                listenHost,
                fleet.peerPort(),
                peerAddresses(fleet),
                Path.of(fleet.secretFile()),
                fleet.peerConnections());
    }

    /** A static list as given, or every address the peer Service's DNS name has now (one per ready or draining pod). */
    private static PeerAddresses peerAddresses(FleetConfig fleet) {
        if (fleet.peers() != null && !fleet.peers().isEmpty()) {
            List<InetSocketAddress> listed =
                    fleet.peers().stream().map(FleetSettings::hostPort).toList();
            return () -> listed;
        }
        String service = fleet.peerService();
        int port = fleet.peerPort();
        return () -> {
            try {
                return Arrays.stream(InetAddress.getAllByName(service))
                        .map(a -> new InetSocketAddress(a, port))
                        .toList();
            } catch (UnknownHostException e) {
                return List.of(); // no replica is ready yet, or DNS is down: this one acts alone until it answers
            }
        };
    }

    private static InetSocketAddress hostPort(String peer) {
        int colon = peer.lastIndexOf(':');
        String host = peer.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return InetSocketAddress.createUnresolved(host, Integer.parseInt(peer.substring(colon + 1)));
    }
}
