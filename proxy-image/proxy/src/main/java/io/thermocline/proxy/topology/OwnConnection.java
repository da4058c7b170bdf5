package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import io.thermocline.proxy.backend.BackendConnection;
import io.thermocline.proxy.backend.BackendConnector;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

/**
 * A logged-in connection of the monitor's own to one member (the primary, for the optime poll and the serving probe):
 * kept while that member stays the one asked for and the connection stays open, opened again otherwise.
 */
final class OwnConnection {

    private final BackendConnector connector;
    private final Function<BackendConnection, CompletableFuture<Void>> login;
    private volatile BackendConnection connection;

    OwnConnection(BackendConnector connector, Function<BackendConnection, CompletableFuture<Void>> login) {
        this.connector = connector;
        this.login = login;
    }

    /** The open connection to {@code member}, or a new one, logged in (a refused login fails it). */
    CompletableFuture<BackendConnection> to(ServerAddress member) {
        BackendConnection c = connection;
        if (c != null && c.isOpen() && c.address().equals(member)) {
            return CompletableFuture.completedFuture(c);
        }
        drop();
        return connector
                .connect(member, 0)
                .thenCompose(opened -> login.apply(opened).handle((v, e) -> {
                    if (e != null) {
                        opened.close();
                        throw new CompletionException(e);
                    }
                    connection = opened;
                    return opened;
                }));
    }

    void drop() {
        BackendConnection c = connection;
        connection = null;
        if (c != null) {
            c.close();
        }
    }
}
