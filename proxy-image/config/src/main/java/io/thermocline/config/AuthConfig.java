package io.thermocline.config;

import java.time.Duration;
import java.util.List;

/**
 * Client authentication at the proxy (docs/security.md).
 *
 * @param mode              {@code required} (the default): every command but the handshake needs a SCRAM login;
 *                          {@code disabled}: clients may log in but need not, as mongod without {@code --auth}
 * @param users             where users come from: {@code archive} (the archive's own users, read with the
 *                          credentials of {@code tiers.archive.uri}), {@code file} ({@code usersFile}), or both
 *                          ({@code archive,file}: the file is asked when the archive has no such user)
 * @param usersFile         YAML or JSON file of users and roles (a mounted Secret); re-read when it changes
 * @param refreshInterval   an archive user is read again after this, so changes on the archive apply within it
 * @param missRetryInterval a user the archive does not have is asked for again after this
 * @param failedLoginDelay  first delay after a failed login from an address; doubles with each further failure
 * @param maxFailedLoginDelay the delay stops growing here
 */
public record AuthConfig(String mode, List<String> users, String usersFile, Duration refreshInterval, Duration missRetryInterval,
                         Duration failedLoginDelay, Duration maxFailedLoginDelay) {
    public static final List<String> MODES = List.of("disabled", "required");
    public static final List<String> SOURCES = List.of("archive", "file");

    public AuthConfig {
        users = users == null ? List.of() : List.copyOf(users);
    }

    public static AuthConfig defaults() {
        return new AuthConfig("required", List.of("archive"), null, Duration.ofSeconds(30), Duration.ofSeconds(2),
                Duration.ofMillis(100), Duration.ofSeconds(10));
    }

    /** Authentication off and no users: the embedded default on localhost, and tests that do not test security. */
    public static AuthConfig disabled() {
        return new AuthConfig("disabled", List.of(), null, Duration.ofSeconds(30), Duration.ofSeconds(2),
                Duration.ofMillis(100), Duration.ofSeconds(10));
    }
}
