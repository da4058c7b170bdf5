package io.thermocline.proxy.server.forwarding;

import io.thermocline.proxy.command.ClientReplies;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.ErrorMapping;
import io.thermocline.proxy.gateway.Forwarder;
import io.thermocline.proxy.gateway.TierBackend;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.bson.RawBsonDocument;

/** A command the proxy does not route itself: to the archive as a mongos would send it, and the answer back. */
public final class PassThrough {
    private final Forwarder forwarder;
    private final ClientReplies replies;
    private final ErrorMapping errors;

    public PassThrough(Forwarder forwarder, ClientReplies replies, ErrorMapping errors) {
        this.forwarder = forwarder;
        this.replies = replies;
        this.errors = errors;
    }

    public CompletableFuture<Void> handle(Request request) {
        return handle(request, UnaryOperator.identity(), reply -> {});
    }

    /** As {@link #handle(Request)}, with a successful answer {@code edit}ed before the client sees it. */
    public CompletableFuture<Void> edited(Request request, UnaryOperator<RawBsonDocument> edit) {
        return handle(request, edit, reply -> {});
    }

    /** As {@link #handle(Request)}; {@code observer} sees the archive's reply after the client got it (shadow mode compares it). */
    public CompletableFuture<Void> observed(Request request, Consumer<RawBsonDocument> observer) {
        return handle(request, UnaryOperator.identity(), observer);
    }

    private CompletableFuture<Void> handle(
            Request request, UnaryOperator<RawBsonDocument> edit, Consumer<RawBsonDocument> observer) {
        TierBackend archive = forwarder.backends().archive();
        return forwarder
                .causalPointFor(archive, request.traits().readConcern())
                .thenCompose(readConcern -> forwarder.call(request, archive, request.msg(), readConcern))
                .thenCompose(answer -> replies.finish(
                                request, answer.ok() ? edit.apply(answer.body()) : answer.body(), answer.ok(), 0)
                        .thenRun(() -> observer.accept(answer.body())))
                .exceptionallyCompose(e -> errors.unavailable(request, e));
    }
}
