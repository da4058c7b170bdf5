package io.thermocline.embeddeddefault;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.proxy.tiered.RoutingMetrics;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** The embedded default's live status: documents per tier, reads by tier, feeder lag. */
final class StatusLine implements AutoCloseable {

    private final MongoClient fast;
    private final MongoClient archive;
    private final EmbeddedStack stack;
    private final Feeder feeder;
    private final PrintWriter out;
    private final boolean terminal = System.console() != null;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "thermocline-status");
        t.setDaemon(true);
        return t;
    });

    private StatusLine(String fastUri, String archiveUri, EmbeddedStack stack, Feeder feeder, PrintWriter out) {
        this.fast = MongoClients.create(fastUri);
        this.archive = MongoClients.create(archiveUri);
        this.stack = stack;
        this.feeder = feeder;
        this.out = out;
    }

    static StatusLine start(Duration every, String fastUri, String archiveUri, EmbeddedStack stack, Feeder feeder, PrintWriter out) {
        StatusLine line = new StatusLine(fastUri, archiveUri, stack, feeder, out);
        line.timer.scheduleWithFixedDelay(line::print, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
        return line;
    }

    private void print() {
        try {
            String text = render();
            if (terminal) {
                out.print("\r" + text + "   ");
            } else {
                out.println(text);
            }
            out.flush();
        } catch (RuntimeException e) {
            out.println("status unavailable: " + e.getMessage());
            out.flush();
        }
    }

    String render() {
        long fastDocs = count(fast);
        long archiveDocs = count(archive);
        long fastReads = stack.readsServedBy(RoutingMetrics.Served.FAST);
        long archiveReads = stack.readsServedBy(RoutingMetrics.Served.ARCHIVE);
        FeederCheckpoint checkpoint = feeder.lastCheckpoint();
        String lag = checkpoint == null ? "starting"
                : String.format(Locale.ROOT, "%.1f s, %d events pending", checkpoint.lagSeconds(), checkpoint.pendingEvents());
        String line = String.format(Locale.ROOT, "%s.%s docs: fast %,d | archive %,d   reads: fast %,d | archive %,d   feeder lag: %s",
                SampleData.DATABASE, SampleData.COLLECTION, fastDocs, archiveDocs,
                fastReads, archiveReads, lag);
        return stack.writesRefused().map(cause -> line + "   WRITES REFUSED: " + cause).orElse(line);
    }

    private static long count(MongoClient client) {
        return client.getDatabase(SampleData.DATABASE).getCollection(SampleData.COLLECTION).estimatedDocumentCount();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (terminal) {
            out.println();
            out.flush();
        }
        fast.close();
        archive.close();
    }
}
