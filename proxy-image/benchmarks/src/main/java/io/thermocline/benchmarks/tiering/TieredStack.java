package io.thermocline.benchmarks.tiering;

import io.thermocline.benchmarks.ycsb.ChildProcess;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Thermocline ({@link TieredStackMain}) in a process of its own in front of an archive. */
final class TieredStack implements AutoCloseable {
    private final ChildProcess process;
    final int port;
    private final int httpPort;
    private final HttpClient http = HttpClient.newHttpClient();

    private final int fastPort;

    private TieredStack(ChildProcess process, int port, int httpPort, int fastPort) {
        this.process = process;
        this.port = port;
        this.httpPort = httpPort;
        this.fastPort = fastPort;
    }

    /** {@code fastOplogEntries}: the fast tier's oplog, in entries (the embedded set keeps one per statement, in the heap). */
    static TieredStack start(String archiveUri, boolean warmer, int fastOplogEntries, List<String> settings, List<String> jvm, Path log)
            throws IOException, InterruptedException {
        int port = ChildProcess.freePort();
        int httpPort = ChildProcess.freePort();
        int fastPort = ChildProcess.freePort();
        List<String> args = new ArrayList<>(List.of(Integer.toString(port), Integer.toString(httpPort), archiveUri, Boolean.toString(warmer),
                Integer.toString(fastPort), Integer.toString(fastOplogEntries)));
        args.addAll(settings);
        return new TieredStack(ChildProcess.java("thermocline", jvm, TieredStackMain.class.getName(), args, port, log), port, httpPort,
                fastPort);
    }

    String uri() {
        return "mongodb://127.0.0.1:" + port + "/";
    }

    /** One sample of a metric of the proxy's /metrics (workers included), summed over its label sets; NaN when absent. */
    double metric(String name) throws IOException, InterruptedException {
        return metrics().sum(name);
    }

    /** The proxy's /metrics page at one moment, read once for every counter taken from it. */
    Metrics metrics() throws IOException, InterruptedException {
        return new Metrics(http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body());
    }

    record Metrics(String body) {
        /** {@code name} summed over the label sets that contain every one of {@code labels} (e.g. {@code outcome="skipped"}); NaN when absent. */
        double sum(String name, String... labels) {
            double sum = Double.NaN;
            for (String line : body.split("\n")) {
                if ((line.startsWith(name + " ") || line.startsWith(name + "{")) && containsAll(line.substring(0, line.lastIndexOf(' ')), labels)) {
                    double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                    sum = Double.isNaN(sum) ? v : sum + v;
                }
            }
            return sum;
        }

        /** How much a counter grew from {@code before} to this sample (a counter not yet registered counts as 0). */
        double since(Metrics before, String name, String... labels) {
            return orZero(sum(name, labels)) - orZero(before.sum(name, labels));
        }

        private static double orZero(double counted) {
            return Double.isNaN(counted) ? 0 : counted;
        }
    }

    private static boolean containsAll(String labelSet, String... labels) {
        for (String label : labels) {
            if (!labelSet.contains(label)) {
                return false;
            }
        }
        return true;
    }

    /** Waits until the feeder has mirrored every fast-tier write; false after {@code timeout}. */
    boolean awaitMirrored(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            Metrics m = metrics();
            if (m.sum("thermocline_feeder_pending_events") == 0 && m.sum("thermocline_feeder_lag_seconds") == 0) {
                return true;
            }
            Thread.sleep(500);
        }
        return false;
    }

    /** Documents of {@code database.collection} the fast tier holds. */
    long fastTierDocuments(String database, String collection) {
        try (com.mongodb.client.MongoClient c = com.mongodb.client.MongoClients.create("mongodb://127.0.0.1:" + fastPort + "/?replicaSet=fast")) {
            return c.getDatabase(database).getCollection(collection).estimatedDocumentCount();
        }
    }

    /** Samples the feeder's lag every second while a run goes on; {@link LagSampler#close} gives the largest. */
    LagSampler sampleLag() {
        return new LagSampler();
    }

    final class LagSampler implements AutoCloseable {
        private volatile boolean stop;
        private volatile double max;
        private final Thread thread = new Thread(() -> {
            while (!stop) {
                try {
                    double lag = metric("thermocline_feeder_lag_seconds");
                    if (lag > max) {
                        max = lag;
                    }
                    Thread.sleep(1000);
                } catch (IOException e) {
                    // a missed sample; the next one counts
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "feeder-lag-sampler");

        LagSampler() {
            thread.setDaemon(true);
            thread.start();
        }

        double max() {
            return max;
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.join();
        }
    }

    java.time.Duration cpu() {
        return process.cpu();
    }

    @Override
    public void close() throws InterruptedException {
        process.close();
    }
}
