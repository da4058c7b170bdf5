package io.thermocline.embedded.member;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * The server's {@code failCommand} fail point (configureFailPoint), as the drivers' own tests use it:
 * fail, block, or close the connection on named commands, a number of times or always; it counts the
 * times it was entered, for {@code waitForFailPoint} (a test waits until a command is held there).
 */
final class FailPoints {
    /** What to do to one command. */
    record FailCommand(BsonArray commands, int errorCode, BsonArray errorLabels, boolean closeConnection, long blockMillis) {
        boolean matches(String commandName) {
            for (BsonValue c : commands) {
                if (c.isString() && c.asString().getValue().equalsIgnoreCase(commandName)) {
                    return true;
                }
            }
            return false;
        }
    }

    private record Armed(FailCommand action, int remaining) {
    }

    private final AtomicReference<Armed> failCommand = new AtomicReference<>();
    private final AtomicLong timesEntered = new AtomicLong();

    void configure(BsonDocument command) {
        String name = command.getString("configureFailPoint").getValue();
        if (!"failCommand".equals(name)) {
            throw new IllegalArgumentException("fail point " + name + " is not supported; only failCommand is");
        }
        BsonValue mode = command.get("mode");
        if (mode.isString() && "off".equals(mode.asString().getValue())) {
            failCommand.set(null);
            return;
        }
        int times = mode.isString() ? Integer.MAX_VALUE : mode.asDocument().getNumber("times").intValue();
        BsonDocument data = command.getDocument("data", new BsonDocument());
        FailCommand action = new FailCommand(data.getArray("failCommands", new BsonArray()),
            data.getNumber("errorCode", new BsonInt32(0)).intValue(),
            data.getArray("errorLabels", new BsonArray()),
            data.getBoolean("closeConnection", BsonBoolean.FALSE).getValue(),
            data.getBoolean("blockConnection", BsonBoolean.FALSE).getValue()
                ? data.getNumber("blockTimeMS", new BsonInt32(0)).longValue() : 0);
        failCommand.set(new Armed(action, times));
    }

    /** How many commands the fail point has acted on since the member started (mongod's timesEntered). */
    long timesEntered() {
        return timesEntered.get();
    }

    /** Consumes one activation when the command is targeted. */
    Optional<FailCommand> trigger(String commandName) {
        while (true) {
            Armed armed = failCommand.get();
            if (armed == null || !armed.action().matches(commandName)) {
                return Optional.empty();
            }
            Armed next = armed.remaining() <= 1 ? null : new Armed(armed.action(), armed.remaining() == Integer.MAX_VALUE
                ? Integer.MAX_VALUE : armed.remaining() - 1);
            if (failCommand.compareAndSet(armed, next)) {
                timesEntered.incrementAndGet();
                return Optional.of(armed.action());
            }
        }
    }
}
