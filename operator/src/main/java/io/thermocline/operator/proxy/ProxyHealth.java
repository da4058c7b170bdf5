package io.thermocline.operator.proxy;

import java.util.Optional;

/**
 * What a proxy pod's {@code /health/ready} says while it is not ready: the data plane's own cause (a tier that refused its
 * login, a rejected certificate, no primary), which a Deployment's ready count cannot carry. Behind an interface so tests
 * fake the pods.
 */
public interface ProxyHealth {

    /** The body of a 503 from {@code http://host:port/health/ready}; empty when it answered 200 or could not be asked. */
    Optional<String> notReady(String host, int port);
}
