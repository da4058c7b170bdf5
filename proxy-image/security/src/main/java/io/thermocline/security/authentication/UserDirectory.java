package io.thermocline.security.authentication;

import io.thermocline.security.UserName;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** Where the proxy finds users: the archive's own users, a users file, or both. */
public interface UserDirectory extends AutoCloseable {

    /** The user with its credentials and privileges; empty when it does not exist. */
    CompletableFuture<Optional<StoredUser>> find(UserName name);

    /** A short description for logs, e.g. {@code archive} or {@code file:/etc/thermocline/users.yaml}. */
    String describe();

    @Override
    default void close() {
    }

    /** Looks in {@code first}, then in {@code second}; a user in both is taken from {@code first}. */
    static UserDirectory either(UserDirectory first, UserDirectory second) {
        return new UserDirectory() {
            @Override
            public CompletableFuture<Optional<StoredUser>> find(UserName name) {
                return first.find(name).thenCompose(u -> u.isPresent() ? CompletableFuture.completedFuture(u) : second.find(name));
            }

            @Override
            public String describe() {
                return first.describe() + "+" + second.describe();
            }

            @Override
            public void close() {
                first.close();
                second.close();
            }
        };
    }

    static UserDirectory none() {
        return new UserDirectory() {
            @Override
            public CompletableFuture<Optional<StoredUser>> find(UserName name) {
                return CompletableFuture.completedFuture(Optional.empty());
            }

            @Override
            public String describe() {
                return "none";
            }
        };
    }
}
