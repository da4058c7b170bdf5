package io.thermocline.proxy.command;

import io.thermocline.proxy.metrics.ProxyMetrics;
import io.thermocline.wire.OpMsg;
import io.thermocline.wire.WireCodec;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The last step of every request: count it, then answer the client unless it asked for no answer (moreToCome). */
public final class ClientReplies {
    private final ProxyMetrics metrics;

    public ClientReplies(ProxyMetrics metrics) {
        this.metrics = metrics;
    }

    public ProxyMetrics metrics() {
        return metrics;
    }

    /** Answers with {@code body}; {@code respondTo} is the message it responds to, 0 for the request itself. */
    public CompletableFuture<Void> finish(Request request, RawBsonDocument body, boolean ok, int respondTo) {
        metrics.commandFinished(request.name(), ok ? "ok" : "error", System.nanoTime() - request.startNanos());
        if (request.msg().moreToCome()) {
            return CompletableFuture.completedFuture(null);
        }
        int responseTo = respondTo != 0 ? respondTo : request.msg().requestId();
        return request.client().send(new OpMsg(WireCodec.nextRequestId(), responseTo, 0, body, List.of()), request.compressor());
    }

    public CompletableFuture<Void> reply(Request request, BsonDocument body) {
        return finish(request, OpMsg.raw(body), OpMsg.isOk(body), 0);
    }
}
