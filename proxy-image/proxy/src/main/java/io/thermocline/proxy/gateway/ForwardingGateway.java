package io.thermocline.proxy.gateway;

import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.proxy.topology.TierTopology;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** A tier's gateway over the proxy's own Netty path: the {@link Forwarder} to the tier's members ({@link TierBackend}). */
public final class ForwardingGateway implements TierGateway {
    private final Forwarder forwarder;
    private final TierBackend backend;

    public ForwardingGateway(Forwarder forwarder, TierBackend backend) {
        this.forwarder = forwarder;
        this.backend = backend;
    }

    @Override
    public Tier tier() {
        return backend.tier();
    }

    @Override
    public TierTopology topology() {
        return backend.monitor().topology();
    }

    @Override
    public Optional<Duration> outOfServiceFor() {
        return backend.outOfServiceFor();
    }

    @Override
    public CompletableFuture<TierReply> send(Request request, OpMsg msg) {
        return forwarder.call(request, backend, msg);
    }

    @Override
    public CompletableFuture<Boolean> kill(long proxyCursorId) {
        return forwarder.kill(proxyCursorId);
    }
}
