package io.thermocline.proxy.cursor;

import io.thermocline.proxy.session.SessionKey;

/**
 * What keeps a cursor alive on the backend: its logical session (any connection may continue
 * it) or, without a session or in load-balanced mode, the client connection that opened it.
 */
public sealed interface CursorOwner {
    record Session(SessionKey session) implements CursorOwner {
    }

    record Connection(long connectionId) implements CursorOwner {
    }
}
