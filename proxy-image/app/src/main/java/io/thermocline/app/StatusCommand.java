package io.thermocline.app;

import com.mongodb.MongoException;
import com.mongodb.client.model.Filters;
import com.mongodb.reactivestreams.client.MongoClient;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.FeederHealth;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.mode.FollowerState;
import io.thermocline.tiering.mode.ModeController;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.Phase;
import io.thermocline.tiering.mode.ShadowEvidence;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.TierClients;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code thermocline status [--json]}: one screen of the fleet's state: mode and phase (with the refusal),
 * documents per tier, coverage per collection, feeder lag, the archive follower (lease holder, lag behind the
 * archive, resync), shadow agreement, drain progress.
 */
@Command(
        name = "status",
        mixinStandardHelpOptions = true,
        description =
                "Mode, tier sizes, coverage per collection, feeder lag, archive follower, shadow agreement and drain progress.",
        exitCodeOnInvalidInput = 2)
public final class StatusCommand extends FleetCommand {

    @Option(
            names = "--json",
            description =
                    "Print one plain JSON document (dates as ISO-8601 strings; schema in docs/adoption.md) instead of text.")
    boolean json;

    public StatusCommand() {
        super("thermocline-cli");
    }

    @Override
    int run(ThermoclineConfig loaded, TierClients clients) {
        BsonDocument status = status(loaded.collections(), clients);
        out().println(json ? PlainJson.of(status) : text(status));
        out().flush();
        return 0;
    }

    static BsonDocument status(List<CollectionPolicy> policies, TierClients clients) {
        MetadataStore metadata = new MetadataStore(clients.fast());
        ModeStore modes = new ModeStore(metadata);
        ModeDocument mode = modes.read();
        FeederCheckpoint feeder = metadata.feederCheckpoint();
        FeederHealth.ArchiveUnavailable unavailable = metadata.feederHealth().archiveUnavailable();
        List<ShadowEvidence> evidence = modes.evidence();
        ArchiveAnswers archive = new ArchiveAnswers(clients.archive());
        BsonArray collections = new BsonArray();
        for (CollectionPolicy p : policies) {
            Namespace ns = Namespace.of(p);
            NamespaceState state = metadata.namespace(p.namespace());
            long reads = 0, wouldServe = 0, compared = 0, agreed = 0, diverged = 0, skipped = 0;
            BsonArray samples = new BsonArray();
            for (ShadowEvidence e : evidence) {
                if (e.namespace().equals(p.namespace())) {
                    reads += e.reads();
                    wouldServe += e.wouldServe();
                    compared += e.compared();
                    agreed += e.agreed();
                    diverged += e.diverged();
                    skipped += e.skipped();
                    e.toBson().getArray("samples").forEach(samples::add);
                }
            }
            collections.add(new BsonDocument("namespace", new BsonString(p.namespace()))
                    .append(
                            "fastDocuments",
                            new BsonInt64(Blocking.single(ns.in(clients.fast()).countDocuments(Filters.empty()))
                                    .orElse(0L)))
                    .append("archiveDocuments", new BsonInt64(archive.count(ns)))
                    .append(
                            "coveredFrom",
                            state.oldestCovered() == null
                                    ? BsonNull.VALUE
                                    : new BsonString(state.oldestCovered().toString()))
                    .append(
                            "warmed",
                            BsonBoolean.valueOf(
                                    state.warmer() != null && state.warmer().complete()))
                    .append(
                            "shadow",
                            new BsonDocument("reads", new BsonInt64(reads))
                                    .append("wouldServe", new BsonInt64(wouldServe))
                                    .append("compared", new BsonInt64(compared))
                                    .append("agreed", new BsonInt64(agreed))
                                    .append("diverged", new BsonInt64(diverged))
                                    .append("skipped", new BsonInt64(skipped))
                                    .append("samples", samples)));
        }
        BsonDocument modeDoc = mode.toBson();
        modeDoc.remove("_id");
        FollowerState follower = modes.follower();
        BsonTimestamp archiveLatest = archive.latest();
        return new BsonDocument("mode", modeDoc)
                .append("archive", archive.toBson())
                .append(
                        "feeder",
                        new BsonDocument("lagSeconds", new BsonDouble(feeder.lagSeconds()))
                                .append("pendingEvents", new BsonInt64(feeder.pendingEvents()))
                                .append(
                                        "archiveUnavailable",
                                        unavailable == null
                                                ? BsonNull.VALUE
                                                : new BsonDocument("why", new BsonString(unavailable.why()))
                                                        .append(
                                                                "since",
                                                                new BsonString(String.valueOf(unavailable.since())))
                                                        .append("cause", new BsonString(unavailable.cause()))))
                .append("follower", follower(follower, mode, archiveLatest, Instant.now()))
                .append("collections", collections);
    }

    /**
     * The follower's document with what it means now: {@code running} (an instance holds an unexpired lease),
     * {@code follows} (the phase is one where it runs), and {@code lagSeconds}, from {@code appliedThrough} to
     * {@code archiveLatest} (the archive's optime, read after the document, so never under-reported) or, while
     * cutting over, to the cutover point, which is all the fleet waits for.
     */
    static BsonDocument follower(FollowerState f, ModeDocument mode, BsonTimestamp archiveLatest, Instant now) {
        BsonTimestamp target =
                mode.phase() == Phase.CUTTING_OVER && mode.cutoverAt() != null ? mode.cutoverAt() : archiveLatest;
        BsonDocument d = f.toStatus()
                .append(
                        "running",
                        BsonBoolean.valueOf(f.lease() != null && !f.lease().expired(now)))
                .append("follows", BsonBoolean.valueOf(mode.phase().archiveAuthoritative()))
                .append("archiveLatest", target == null ? BsonNull.VALUE : target);
        d.append(
                "lagSeconds",
                target == null || f.appliedThrough() == null
                        ? BsonNull.VALUE
                        : new BsonInt64(Math.max(0, seconds(target) - seconds(f.appliedThrough()))));
        return d;
    }

    /**
     * How long the screen waits for an archive answer: an archive that accepts connections but stalls (a full disk, a
     * stuck primary) must not hold the screen for the client's 30 s; it is shown as not serving instead.
     */
    static final Duration ARCHIVE_ANSWER = Duration.ofSeconds(2);

    /**
     * The archive's answers for one screen, each with a deadline of {@link #ARCHIVE_ANSWER} (the driver's timeout: sent
     * as {@code maxTimeMS} and kept by the client, so a paused archive is not waited for). After the first question it
     * leaves unanswered, it is not asked again (each would wait as long): its counts are -1, its optime null, and
     * {@link #toBson} says it is not serving, with the cause.
     */
    static final class ArchiveAnswers {
        private final MongoClient archive;
        private String notServing;

        ArchiveAnswers(MongoClient archive) {
            this.archive = archive;
        }

        /** The namespace's estimated count, -1 when the archive does not answer in time. */
        long count(Namespace ns) {
            Long count = ask(
                    "the count of " + ns,
                    () -> Blocking.single(ns.in(archive)
                                    .withTimeout(ARCHIVE_ANSWER.toMillis(), TimeUnit.MILLISECONDS)
                                    .estimatedDocumentCount())
                            .orElse(0L));
            return count == null ? -1 : count;
        }

        /** The archive's latest optime, null when it does not answer in time. */
        BsonTimestamp latest() {
            return ask("its optime", () -> ModeController.archiveTime(archive, ARCHIVE_ANSWER));
        }

        /** {@code serving}, and why not ({@code cause}, null while it serves). */
        BsonDocument toBson() {
            return new BsonDocument("serving", BsonBoolean.valueOf(notServing == null))
                    .append("cause", notServing == null ? BsonNull.VALUE : new BsonString(notServing));
        }

        private <T> T ask(String what, java.util.function.Supplier<T> question) {
            if (notServing != null) {
                return null;
            }
            try {
                return question.get();
            } catch (MongoException | IllegalStateException e) {
                notServing =
                        "did not answer " + what + " within " + ARCHIVE_ANSWER.toSeconds() + " s: " + e.getMessage();
                return null;
            }
        }
    }

    private static long seconds(BsonTimestamp t) {
        return t.getTime() & 0xFFFFFFFFL;
    }

    private static String time(BsonTimestamp t) {
        return Instant.ofEpochSecond(seconds(t)) + " (" + seconds(t) + "." + t.getInc() + ")";
    }

    static String text(BsonDocument s) {
        BsonDocument m = s.getDocument("mode");
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                "mode      %s (phase %s, epoch %d); requested %s by %s%n",
                m.getString("active").getValue(),
                m.getString("phase").getValue(),
                m.getInt64("epoch").getValue(),
                m.getString("requested").getValue(),
                m.getString("requestedBy").getValue()));
        if (m.isString("refusal")) {
            b.append("refusal   ").append(m.getString("refusal").getValue()).append('\n');
        }
        Phase phase = Phase.parse(m.getString("phase").getValue());
        // a drain section outlives its drain and shadow counters their shadow: show each only in its phases
        boolean draining = phase == Phase.DRAINING || phase == Phase.DRAINED;
        boolean shadowing = phase == Phase.SHADOWING || phase == Phase.CUTTING_OVER;
        if (draining && m.isDocument("drain")) {
            BsonDocument d = m.getDocument("drain");
            b.append(String.format(
                    "drain     lag %.1f s, %d unmirrored, drained %s%n",
                    d.getDouble("feederLagSeconds").getValue(),
                    d.getInt64("unmirroredEvents").getValue(),
                    d.isDateTime("drainedAt") ? "yes" : "not yet"));
        }
        BsonDocument f = s.getDocument("feeder");
        b.append(String.format(
                "feeder    lag %.1f s, %d pending%s%n",
                f.getDouble("lagSeconds").getValue(),
                f.getInt64("pendingEvents").getValue(),
                f.isDocument("archiveUnavailable")
                        ? String.format(
                                "; ARCHIVE UNAVAILABLE (%s since %s): %s, the fast tier keeps the writes",
                                f.getDocument("archiveUnavailable")
                                        .getString("why")
                                        .getValue(),
                                f.getDocument("archiveUnavailable")
                                        .getString("since")
                                        .getValue(),
                                f.getDocument("archiveUnavailable")
                                        .getString("cause")
                                        .getValue())
                        : ""));
        if (s.isDocument("archive")
                && !s.getDocument("archive").getBoolean("serving").getValue()) {
            b.append("archive   NOT SERVING: ")
                    .append(s.getDocument("archive").getString("cause").getValue())
                    .append('\n');
        }
        b.append(follower(s.getDocument("follower")));
        for (var v : s.getArray("collections")) {
            BsonDocument c = v.asDocument();
            BsonDocument sh = c.getDocument("shadow");
            long reads = sh.getInt64("reads").getValue();
            b.append(String.format(
                    "%-24s fast %d, archive %s, covered from %s%s",
                    c.getString("namespace").getValue(),
                    c.getInt64("fastDocuments").getValue(),
                    c.getInt64("archiveDocuments").getValue() < 0
                            ? "unavailable"
                            : String.valueOf(c.getInt64("archiveDocuments").getValue()),
                    c.get("coveredFrom").isNull()
                            ? "(nothing)"
                            : c.getString("coveredFrom").getValue(),
                    c.getBoolean("warmed").getValue() ? " (warmed)" : ""));
            if (!shadowing) {
                b.append('\n');
                continue;
            }
            b.append(String.format(
                    "; shadow: %d reads, %.0f%% would be fast, %d compared, %d agreed, %d diverged, %d skipped%n",
                    reads,
                    reads == 0 ? 0.0 : 100.0 * sh.getInt64("wouldServe").getValue() / reads,
                    sh.getInt64("compared").getValue(),
                    sh.getInt64("agreed").getValue(),
                    sh.getInt64("diverged").getValue(),
                    sh.getInt64("skipped").getValue()));
            for (var sample : sh.getArray("samples")) {
                BsonDocument x = sample.asDocument();
                b.append("    divergent ids ")
                        .append(x.getArray("ids").toString())
                        .append(" fields ")
                        .append(x.getArray("fields"))
                        .append('\n');
            }
        }
        return b.toString();
    }

    /** The archive follower's line: whether it runs and who holds its lease, how far behind the archive, its last resync. */
    static String follower(BsonDocument f) {
        StringBuilder b = new StringBuilder("follower  ");
        boolean running = f.getBoolean("running").getValue();
        if (running) {
            b.append("running, held by ")
                    .append(f.getString("holder").getValue())
                    .append(" (term ")
                    .append(f.getInt64("term").getValue())
                    .append(')');
        } else if (f.isString("holder")) {
            b.append(f.getBoolean("follows").getValue() ? "STOPPED" : "not running")
                    .append(": the lease of ")
                    .append(f.getString("holder").getValue())
                    .append(" (term ")
                    .append(f.getInt64("term").getValue())
                    .append(") expired at ")
                    .append(Instant.ofEpochMilli(f.getDateTime("leaseExpiresAt").getValue()));
        } else {
            b.append(f.getBoolean("follows").getValue() ? "STOPPED" : "not running")
                    .append(": no feeder process has taken its lease");
        }
        if (f.isTimestamp("appliedThrough")) {
            b.append(", applied through ").append(time(f.getTimestamp("appliedThrough")));
        }
        if (f.isInt64("lagSeconds")) {
            b.append(", ").append(f.getInt64("lagSeconds").getValue()).append(" s behind the archive");
        } else if (f.getBoolean("follows").getValue()) {
            b.append(", lag unknown (the archive's optime could not be read)");
        }
        if (f.isDocument("resync")) {
            BsonDocument r = f.getDocument("resync");
            b.append(String.format(
                    "; resync %d %s: %s, %d copied, %d deleted",
                    r.getInt64("count").getValue(),
                    r.isDateTime("finishedAt")
                            ? "finished "
                                    + Instant.ofEpochMilli(
                                            r.getDateTime("finishedAt").getValue())
                            : "RUNNING since "
                                    + Instant.ofEpochMilli(
                                            r.getDateTime("startedAt").getValue()),
                    r.getString("reason").getValue(),
                    r.getInt64("copied").getValue(),
                    r.getInt64("deleted").getValue()));
        }
        if (!f.getBoolean("follows").getValue()) {
            b.append(" (it follows the archive only in Shadowing, CuttingOver and Drained)");
        }
        return b.append('\n').toString();
    }
}
