package io.thermocline.proxy.tiered;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoDatabase;
import io.thermocline.tiering.worker.FaultInjection;
import io.thermocline.tiering.worker.FaultPoint;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bson.Document;

/**
 * A command held at a tier primary's {@code failCommand} fail point ({@code blockConnection}), and the signal that it is
 * there (mongod's {@code waitForFailPoint}): a race test runs its racing step once the command is held, never after a
 * sleep that hopes so.
 */
final class HeldCommand {
    private final MongoDatabase admin;
    private final String data;
    /** The fail point's times entered before this hold was armed: it is off until then, so nothing enters it meanwhile. */
    private final long enteredBefore;

    /** {@code data}: the fail point's data, e.g. {@code {failCommands: ['findAndModify'], blockConnection: true, blockTimeMS: 5000}}. */
    HeldCommand(MongoClient tier, String data) {
        this.admin = tier.getDatabase("admin");
        this.data = data;
        this.enteredBefore = configure("'off'");
    }

    /** Holds the next matching command. */
    void arm() {
        configure("{times: 1}");
    }

    /** Arms the hold when a worker first reaches {@code point}: the command held is the worker's next one, not an earlier one. */
    FaultInjection armedAt(FaultPoint point) {
        AtomicBoolean armed = new AtomicBoolean();
        return reached -> {
            if (reached == point && armed.compareAndSet(false, true)) {
                arm();
            }
        };
    }

    /** Returns once a command is held (fails after 30 s). */
    void awaitHeld() {
        admin.runCommand(new Document("waitForFailPoint", "failCommand").append("timesEntered", enteredBefore + 1)
                .append("maxTimeMS", 30_000));
    }

    void off() {
        configure("'off'");
    }

    private long configure(String mode) {
        return admin.runCommand(Document.parse("{configureFailPoint: 'failCommand', mode: " + mode + ", data: " + data + "}"))
                .get("count", Number.class).longValue();
    }
}
