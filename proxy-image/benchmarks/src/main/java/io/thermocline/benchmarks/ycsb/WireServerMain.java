package io.thermocline.benchmarks.ycsb;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;

/** The benchmark's MongoDB wire server (mongo-java-server, in memory) as a process: {@code WireServerMain <port>}. */
public final class WireServerMain {
    private WireServerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        MongoServer server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", Integer.parseInt(args[0]));
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        Thread.currentThread().join();
    }
}
