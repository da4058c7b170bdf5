package io.thermocline.proxy.server.handshake;

import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.MongoError;
import io.thermocline.proxy.command.Request;

import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The authentication commands. The proxy does not authenticate clients yet, so it refuses them
 * with an error that says so; SCRAM (saslStart/saslContinue, and the speculative authentication a
 * hello carries) is to be answered here.
 */
public final class Authentication {
    private static final Set<String> COMMANDS = Set.of("saslStart", "saslContinue", "authenticate", "logout",
            "getnonce", "speculativeAuthenticate");

    private final ClientReplies replies;

    public Authentication(ClientReplies replies) {
        this.replies = replies;
    }

    public static boolean isAuthentication(String commandName) {
        return COMMANDS.contains(commandName);
    }

    public CompletableFuture<Void> handle(Request request) {
        return replies.reply(request, MongoError.COMMAND_NOT_SUPPORTED.reply("authentication through the Thermocline proxy"
                + " is not supported yet; connect without credentials (see docs/proxy.md)"));
    }
}
