package io.thermocline.app;

import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.backup.BackupPoint;
import io.thermocline.tiering.backup.BackupPointStep;
import io.thermocline.tiering.worker.TierClients;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code thermocline backup-point}: waits until the archive holds every write acknowledged before the command
 * started, then prints the archive time after which any archive backup is complete as of that moment
 * (docs/backup.md). Exit 0 with the point, 1 refused (dead letters, archive refusing writes, feeder stopped or not advancing), 3 timed out.
 */
@Command(
        name = "backup-point",
        mixinStandardHelpOptions = true,
        description = {
            "Wait until the archive holds every write acknowledged before now, then print the archive time",
            "after which any archive backup (PBM, mongodump --oplog, a volume snapshot) is complete as of now (docs/backup.md).",
            "Exit 0 with the point, 1 refused (dead letters, archive refusing writes, feeder stopped or not advancing), 3 timed out."
        },
        exitCodeOnInvalidInput = 2)
public final class BackupPointCommand extends FleetCommand {

    @Option(
            names = "--timeout",
            paramLabel = "SECONDS",
            defaultValue = "300",
            description = "Give up after this long (default ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Option(
            names = "--stall",
            paramLabel = "SECONDS",
            defaultValue = "60",
            description =
                    "Refuse when the feeder's mirrored-through stands still this long (default ${DEFAULT-VALUE}).")
    long stallSeconds;

    @Option(
            names = "--json",
            description = "Print one JSON document (plain JSON) instead of text; progress still goes to stderr.")
    boolean json;

    public BackupPointCommand() {
        super("thermocline-backup-point");
    }

    @Override
    int run(ThermoclineConfig loaded, TierClients clients) throws InterruptedException {
        PrintWriter out = out();
        PrintWriter err = err();
        // the clients are open but have not reached a tier yet: every write acknowledged before this instant
        // is acknowledged before the point is awaited
        Instant started = Instant.now();
        try {
            BackupPoint.Point point = new BackupPoint(clients.fast(), clients.archive(), hostName(), Clock.systemUTC())
                    .await(
                            Duration.ofSeconds(timeoutSeconds),
                            Duration.ofSeconds(stallSeconds),
                            Duration.ofSeconds(1),
                            line -> {
                                err.println("backup-point: " + line);
                                err.flush();
                            });
            out.println(json ? plain(point(point, started)) : text(point, started));
            out.flush();
            return 0;
        } catch (BackupPoint.Refusal refusal) {
            boolean timedOut = refusal.reason() == BackupPointStep.Reason.TIMED_OUT;
            err.println("backup-point: " + (timedOut ? "" : "refused: ") + refusal.getMessage());
            err.flush();
            if (json) {
                out.println(plain(new BsonDocument("outcome", new BsonString(timedOut ? "timedOut" : "refused"))
                        .append("reason", new BsonString(refusal.reason().name()))
                        .append("message", new BsonString(refusal.getMessage()))));
                out.flush();
            }
            return timedOut ? 3 : 1;
        }
    }

    static BsonDocument point(BackupPoint.Point p, Instant started) {
        long seconds = p.archiveTime().getTime() & 0xFFFFFFFFL;
        return new BsonDocument("outcome", new BsonString("reached"))
                .append("archiveTime", timestamp(p.archiveTime()))
                .append(
                        "archiveTimeIso",
                        new BsonString(Instant.ofEpochSecond(seconds).toString()))
                // PITR tools take whole seconds: the next second is at or after the point
                .append(
                        "restoreAtOrAfter",
                        new BsonString(Instant.ofEpochSecond(seconds + 1).toString()))
                .append("fastTierTime", timestamp(p.fastTierTime()))
                .append("acknowledgedBefore", new BsonString(started.toString()))
                .append("archiveAuthoritative", BsonBoolean.valueOf(p.archiveAuthoritative()));
    }

    static String text(BackupPoint.Point p, Instant started) {
        BsonDocument d = point(p, started);
        return "backup point: archive time " + d.getString("archiveTimeIso").getValue() + " (Timestamp("
                + d.getDocument("archiveTime").getInt64("t").getValue() + ", "
                + d.getDocument("archiveTime").getInt64("i").getValue() + "))\n"
                + "every write acknowledged before " + started
                + " is in the archive as of that time: an archive backup whose"
                + " consistency point is at or after it holds them all (PBM: a backup finished after it, or PITR to "
                + d.getString("restoreAtOrAfter").getValue()
                + " or later; mongodump --oplog: a dump started after it; a volume"
                + " snapshot taken after it). docs/backup.md";
    }

    private static BsonDocument timestamp(BsonTimestamp t) {
        return new BsonDocument("t", new BsonInt64(t.getTime() & 0xFFFFFFFFL)).append("i", new BsonInt64(t.getInc()));
    }

    static String plain(BsonDocument d) {
        return d.toJson(
                JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build());
    }

    private static String hostName() {
        String host = System.getenv("HOSTNAME");
        return host == null || host.isBlank() ? "cli" : host;
    }
}
