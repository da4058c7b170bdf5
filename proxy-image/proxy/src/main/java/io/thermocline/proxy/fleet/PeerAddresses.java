package io.thermocline.proxy.fleet;

import java.net.InetSocketAddress;
import java.util.List;

/** The peer addresses as of now (DNS answers change as replicas come and go). */
@FunctionalInterface
public interface PeerAddresses {
    List<InetSocketAddress> resolve();
}
