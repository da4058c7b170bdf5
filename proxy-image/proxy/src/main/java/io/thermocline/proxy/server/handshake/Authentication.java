package io.thermocline.proxy.server.handshake;

import io.thermocline.proxy.auth.ProxySecurity;
import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.Request;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Where every command passes before its handler (issue 15): the authentication commands
 * (saslStart/saslContinue, logout) and {@code connectionStatus} are answered here, and a command
 * the connection's user may not run is refused here, so authorization covers every handler.
 */
public final class Authentication {
    private final ProxySecurity security;
    private final ClientReplies replies;

    public Authentication(ProxySecurity security, ClientReplies replies) {
        this.security = security;
        this.replies = replies;
    }

    /** The answer when security answers {@code request} itself; empty hands it on to its handler. */
    public Optional<CompletableFuture<Void>> intercept(Request request) {
        return security.intercept(request.client().auth(), request.msg())
                .map(answer -> answer.thenCompose(out -> replies.reply(request, out)));
    }
}
