package io.thermocline.embeddeddefault;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.proxy.tiered.exchange.RoutingMetrics;
import io.thermocline.tiering.feeder.Feeder;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
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
    /** On a terminal, the line redrawn in place under the logs; null otherwise (plain lines on {@code out}). */
    private final LiveLine live;
    private final PrintStream systemOut = System.out;
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
        if (System.console() != null) {
            live = new LiveLine(new FileOutputStream(FileDescriptor.out), true);
            // logback's console appender writes to System.out at each event: its lines then go above the status
            System.setOut(new PrintStream(live.logs(), true, StandardCharsets.UTF_8));
        } else {
            live = null;
        }
    }

    static StatusLine start(Duration every, String fastUri, String archiveUri, EmbeddedStack stack, Feeder feeder, PrintWriter out) {
        StatusLine line = new StatusLine(fastUri, archiveUri, stack, feeder, out);
        line.timer.scheduleWithFixedDelay(line::print, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
        return line;
    }

    private void print() {
        try {
            String text = render();
            if (live != null) {
                live.show(text);
            } else {
                out.println(text);
                out.flush();
            }
        } catch (IOException e) {
            // the terminal went away: nothing to show the status on
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
        if (live != null) {
            try {
                live.end();
            } catch (IOException e) {
                // the terminal went away
            }
            System.setOut(systemOut);
        }
        fast.close();
        archive.close();
    }
}
