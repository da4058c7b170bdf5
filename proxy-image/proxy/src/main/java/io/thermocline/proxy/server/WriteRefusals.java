package io.thermocline.proxy.server;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * Where a tier's storage refuses writes (a full disk, a read-only volume), a write the proxy let through
 * could be acknowledged by a tier that cannot keep it, or pile up where it can never be mirrored. Each
 * check names what refuses and why; while one does, the proxy is not ready and refuses every write
 * before it reaches a tier, with a retryable error naming the cause. Reads go on.
 */
public final class WriteRefusals {

    /** One source of refusals: empty while its storage takes writes. */
    public record Check(String name, Supplier<Optional<String>> cause) {
    }

    private static final Set<String> WRITES = Set.of("insert", "update", "delete", "findandmodify", "bulkwrite");

    private final List<Check> checks = new CopyOnWriteArrayList<>();

    public void add(Check check) {
        checks.add(check);
    }

    /** The first refusal, as "NAME: CAUSE" (empty while every storage takes writes). */
    public Optional<String> current() {
        for (Check check : checks) {
            Optional<String> cause = check.cause().get();
            if (cause.isPresent()) {
                return Optional.of(check.name() + ": " + cause.get());
            }
        }
        return Optional.empty();
    }

    /** Whether a command writes documents (refused while a storage refuses writes). */
    public static boolean writes(String commandName) {
        return WRITES.contains(commandName.toLowerCase(Locale.ROOT));
    }
}
