package io.thermocline.proxy.command;

import io.thermocline.wire.Compressor;
import io.thermocline.wire.OpMsg;

/**
 * One client command, decoded once where it enters the proxy and handed to every handler: the
 * message, its traits, the compressor to answer with, and when it arrived.
 */
public record Request(Client client, OpMsg msg, CommandTraits traits, Compressor compressor, long startNanos) {

    public static Request of(Client client, OpMsg msg, Compressor compressor) {
        return new Request(client, msg, CommandTraits.of(msg.commandName(), msg.body()), compressor, System.nanoTime());
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
