package io.thermocline.app;

import com.mongodb.client.model.Filters;
import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.ThermoclineConfig;
import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.MetadataStore;
import io.thermocline.tiering.metadata.NamespaceState;
import io.thermocline.tiering.mode.ModeDocument;
import io.thermocline.tiering.mode.ModeStore;
import io.thermocline.tiering.mode.ShadowEvidence;
import io.thermocline.tiering.reactive.Blocking;
import io.thermocline.tiering.worker.TierClients;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.json.JsonWriterSettings;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code thermocline status [--json]}: one screen of the fleet's state: mode and phase (with the refusal),
 * documents per tier, coverage per collection, feeder lag, shadow agreement, drain progress.
 */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Mode, tier sizes, coverage per collection, feeder lag, shadow agreement and drain progress.",
        exitCodeOnInvalidInput = 2)
public final class StatusCommand implements Callable<Integer> {

    @Option(names = "--json", description = "Print one JSON document instead of text.")
    boolean json;

    @Option(names = "--config", paramLabel = "FILE", description = "Config file (YAML or JSON), as for the proxy.")
    Path config;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    private final Map<String, String> environment;

    public StatusCommand() {
        this(System.getenv());
    }

    StatusCommand(Map<String, String> environment) {
        this.environment = environment;
    }

    @Override
    public Integer call() {
        ThermoclineConfig loaded = WorkerRuntime.load("status", config, environment, spec.commandLine().getErr());
        if (loaded == null) {
            return 2;
        }
        try (TierClients clients = TierClients.open(loaded, "thermocline-cli")) {
            BsonDocument status = status(loaded.collections(), clients);
            PrintWriter out = spec.commandLine().getOut();
            out.println(json ? status.toJson(JsonWriterSettings.builder().indent(true).build()) : text(status));
            out.flush();
            return 0;
        }
    }

    static BsonDocument status(List<CollectionPolicy> policies, TierClients clients) {
        MetadataStore metadata = new MetadataStore(clients.fast());
        ModeStore modes = new ModeStore(metadata);
        ModeDocument mode = modes.read();
        FeederCheckpoint feeder = metadata.feederCheckpoint();
        List<ShadowEvidence> evidence = modes.evidence();
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
                    .append("fastDocuments", new BsonInt64(Blocking.single(ns.in(clients.fast()).countDocuments(Filters.empty())).orElse(0L)))
                    .append("archiveDocuments", new BsonInt64(Blocking.single(ns.in(clients.archive()).estimatedDocumentCount()).orElse(0L)))
                    .append("coveredFrom", state.oldestCovered() == null ? BsonNull.VALUE : new BsonString(state.oldestCovered().toString()))
                    .append("warmed", org.bson.BsonBoolean.valueOf(state.warmer() != null && state.warmer().complete()))
                    .append("shadow", new BsonDocument("reads", new BsonInt64(reads)).append("wouldServe", new BsonInt64(wouldServe))
                            .append("compared", new BsonInt64(compared)).append("agreed", new BsonInt64(agreed))
                            .append("diverged", new BsonInt64(diverged)).append("skipped", new BsonInt64(skipped))
                            .append("samples", samples)));
        }
        BsonDocument modeDoc = mode.toBson();
        modeDoc.remove("_id");
        return new BsonDocument("mode", modeDoc)
                .append("feeder", new BsonDocument("lagSeconds", new BsonDouble(feeder.lagSeconds()))
                        .append("pendingEvents", new BsonInt64(feeder.pendingEvents())))
                .append("follower", modes.follower().toStatus())
                .append("collections", collections);
    }

    static String text(BsonDocument s) {
        BsonDocument m = s.getDocument("mode");
        StringBuilder b = new StringBuilder();
        b.append(String.format("mode      %s (phase %s, epoch %d); requested %s by %s%n", m.getString("active").getValue(),
                m.getString("phase").getValue(), m.getInt64("epoch").getValue(), m.getString("requested").getValue(),
                m.getString("requestedBy").getValue()));
        if (m.isString("refusal")) {
            b.append("refusal   ").append(m.getString("refusal").getValue()).append('\n');
        }
        if (m.isDocument("drain")) {
            BsonDocument d = m.getDocument("drain");
            b.append(String.format("drain     lag %.1f s, %d unmirrored, drained %s%n", d.getDouble("feederLagSeconds").getValue(),
                    d.getInt64("unmirroredEvents").getValue(), d.isDateTime("drainedAt") ? "yes" : "not yet"));
        }
        BsonDocument f = s.getDocument("feeder");
        b.append(String.format("feeder    lag %.1f s, %d pending%n", f.getDouble("lagSeconds").getValue(), f.getInt64("pendingEvents").getValue()));
        b.append(follower(s.getDocument("follower")));
        for (var v : s.getArray("collections")) {
            BsonDocument c = v.asDocument();
            BsonDocument sh = c.getDocument("shadow");
            long reads = sh.getInt64("reads").getValue();
            b.append(String.format("%-24s fast %d, archive %d, covered from %s%s; shadow: %d reads, %.0f%% would be fast, %d compared, %d agreed, %d diverged, %d skipped%n",
                    c.getString("namespace").getValue(), c.getInt64("fastDocuments").getValue(), c.getInt64("archiveDocuments").getValue(),
                    c.get("coveredFrom").isNull() ? "(nothing)" : c.getString("coveredFrom").getValue(),
                    c.getBoolean("warmed").getValue() ? " (warmed)" : "", reads,
                    reads == 0 ? 0.0 : 100.0 * sh.getInt64("wouldServe").getValue() / reads, sh.getInt64("compared").getValue(),
                    sh.getInt64("agreed").getValue(), sh.getInt64("diverged").getValue(), sh.getInt64("skipped").getValue()));
            for (var sample : sh.getArray("samples")) {
                BsonDocument x = sample.asDocument();
                b.append("    divergent ids ").append(x.getArray("ids").toString()).append(" fields ").append(x.getArray("fields")).append('\n');
            }
        }
        return b.toString();
    }

    /** The archive follower's line: who holds its lease, how far it applied, its last resync (lost history). */
    static String follower(BsonDocument f) {
        StringBuilder b = new StringBuilder("follower  ");
        b.append(f.isString("holder") ? "held by " + f.getString("holder").getValue() + " (term " + f.getInt64("term").getValue() + ")"
                : "not running");
        if (f.isTimestamp("appliedThrough")) {
            b.append(", applied through ").append(f.getTimestamp("appliedThrough").getTime() & 0xFFFFFFFFL)
                    .append('.').append(f.getTimestamp("appliedThrough").getInc());
        }
        if (f.isDocument("resync")) {
            BsonDocument r = f.getDocument("resync");
            b.append(String.format("; resync %d %s: %s, %d copied, %d deleted", r.getInt64("count").getValue(),
                    r.isDateTime("finishedAt") ? "finished " + java.time.Instant.ofEpochMilli(r.getDateTime("finishedAt").getValue())
                            : "RUNNING since " + java.time.Instant.ofEpochMilli(r.getDateTime("startedAt").getValue()),
                    r.getString("reason").getValue(), r.getInt64("copied").getValue(), r.getInt64("deleted").getValue()));
        }
        return b.append('\n').toString();
    }
}
