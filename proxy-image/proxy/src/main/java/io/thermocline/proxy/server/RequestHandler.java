package io.thermocline.proxy.server;

import io.thermocline.proxy.command.Request;

import java.util.concurrent.CompletableFuture;

/** Where a client connection hands each request it decoded; completes when the request is answered. */
@FunctionalInterface
interface RequestHandler {
    CompletableFuture<Void> handle(Request request);
}
