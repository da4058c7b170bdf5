package io.thermocline.embedded.oplog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.thermocline.embedded.storage.FullDisk;
import io.thermocline.embedded.storage.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The oplog on a disk that fills up: closing it never hangs, and what was committed (acknowledged) is kept. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OplogStoreTest {
    @TempDir
    Path dir;

    @Test
    void closingAfterTheDiskFilledReturnsAtOnceAndKeepsEveryCommittedEntry() throws Exception {
        FullDisk disk = new FullDisk();
        Storage.Directory storage = (Storage.Directory) disk.storage(dir);
        OplogStore oplog = new OplogStore(storage);
        oplog.append(List.of(insert(1)));
        oplog.commit();
        // a store beside it that H2 writes in the background, as it wrote the oplog before: committed after the
        // oplog, it is written (refused) after any background write of the oplog's, and closed by H2 a turn later
        MVStore neighbour = new MVStore.Builder().fileName(storage.h2Name("neighbour.mv")).open();
        MVMap<Integer, Integer> changes = neighbour.openMap("changes");
        changes.put(1, 1);
        neighbour.commit();
        disk.fill();
        oplog.append(List.of(insert(2))); // never committed, so never acknowledged
        changes.put(2, 2);
        await("H2's background writers had their turn on the full disk").atMost(Duration.ofSeconds(30))
                .dontCatchUncaughtExceptions() // H2's background writer dies of the refused write, as it does in production
                .until(() -> disk.refusedWrites("oplog.mv") > 0 || disk.refusedWrites("neighbour.mv") > 0 && neighbour.isClosed());

        CountDownLatch closed = new CountDownLatch(1);
        Thread closing = new Thread(() -> {
            try {
                oplog.close();
            } catch (RuntimeException refused) {
                // the disk refused what was left: never acknowledged
            } finally {
                closed.countDown();
            }
        }, "closing-oplog");
        closing.setDaemon(true); // a close that spins must not keep the test JVM alive
        closing.start();
        assertThat(closed.await(10, TimeUnit.SECONDS)).as("the oplog closed on the full disk within 10 s").isTrue();
        neighbour.closeImmediately();

        disk.free();
        OplogStore reopened = new OplogStore(storage);
        try {
            assertThat(reopened.load()).extracting(OplogEntry::position).contains(insert(1).position());
        } finally {
            reopened.close();
        }
    }

    private static OplogEntry insert(int id) {
        BsonDocument key = new BsonDocument("_id", new BsonInt32(id));
        return new OplogEntry(new OplogPosition(1_700_000_000L << 32, id), 1, 0, Operation.INSERT, "shop", "orders",
                key, key.clone(), null, null, null, false);
    }
}
