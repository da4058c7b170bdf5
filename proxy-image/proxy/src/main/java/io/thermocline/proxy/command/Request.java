package io.thermocline.proxy.command;

import io.thermocline.wire.Compressor;
import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;

/**
 * One client command, decoded once where it enters the proxy and handed to every handler: the
 * message, its traits, the compressor to answer with, and when it arrived.
 *
 * @param clientLsid the {@code lsid} as the client sent it, for messages that name its session; the
 *                   message and traits carry the backend's (docs/security.md, sessions belong to their user)
 */
public record Request(
        Client client,
        OpMsg msg,
        CommandTraits traits,
        Compressor compressor,
        long startNanos,
        BsonDocument clientLsid) {

    public static Request of(Client client, OpMsg msg, Compressor compressor) {
        CommandTraits traits = CommandTraits.of(msg.commandName(), msg.body());
        return new Request(client, msg, traits, compressor, System.nanoTime(), traits.lsid());
    }

    /** This request with its message's sessions replaced by the backend's ({@code sent}); the client's lsid kept for messages. */
    public Request inBackendSessions(OpMsg sent) {
        return new Request(
                client, sent, CommandTraits.of(sent.commandName(), sent.body()), compressor, startNanos, clientLsid);
    }

    /**
     * As {@link #inBackendSessions(OpMsg)}, for a message that differs from this request's only in its sessions ({@code
     * lsid} replaced by {@code backendLsid}, a list of sessions in its first field): its traits are not read again.
     */
    public Request inBackendSessions(OpMsg sent, BsonDocument backendLsid) {
        return new Request(client, sent, traits.withLsid(backendLsid), compressor, startNanos, clientLsid);
    }

    public String name() {
        return traits.name();
    }

    /** The target database ({@code $db}), or null when the client sent none. */
    public String database() {
        return traits.database();
    }

    public long connectionId() {
        return client.id();
    }

    /** The traits of {@code sent}: this request's when it is this request's message, otherwise read from it. */
    public CommandTraits traitsOf(OpMsg sent) {
        return sent == msg ? traits : CommandTraits.of(sent.commandName(), sent.body());
    }
}
