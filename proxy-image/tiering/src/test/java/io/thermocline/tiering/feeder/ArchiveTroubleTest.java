package io.thermocline.tiering.feeder;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.MongoCommandException;
import com.mongodb.MongoExecutionTimeoutException;
import com.mongodb.MongoOperationTimeoutException;
import com.mongodb.MongoSocketOpenException;
import com.mongodb.MongoSocketReadTimeoutException;
import com.mongodb.MongoTimeoutException;
import com.mongodb.ServerAddress;
import java.util.Optional;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

class ArchiveTroubleTest {

    private static MongoCommandException error(int code, String message) {
        return new MongoCommandException(
                BsonDocument.parse("{ok: 0, code: " + code + ", errmsg: '" + message + "'}"), new ServerAddress());
    }

    private static Optional<ArchiveTrouble.Kind> kind(Throwable e) {
        return ArchiveTrouble.of(e).map(ArchiveTrouble::kind);
    }

    @Test
    void anOutageOrAStorageThatRefusesEveryWriteIsTroubleOfTheWholeArchiveAnythingElseIsNot() {
        assertThat(kind(new MongoTimeoutException("Timed out while waiting for a server")))
                .hasValue(ArchiveTrouble.Kind.UNREACHABLE);
        assertThat(kind(new MongoSocketOpenException("Exception opening socket", new ServerAddress())))
                .hasValue(ArchiveTrouble.Kind.UNREACHABLE);
        assertThat(kind(new IllegalStateException("wrapped", new MongoTimeoutException("timed out"))))
                .hasValue(ArchiveTrouble.Kind.UNREACHABLE);
        assertThat(kind(error(14031, "disk full: archive cannot write"))).hasValue(ArchiveTrouble.Kind.REFUSING_WRITES);
        assertThat(kind(error(8000, "you are over your space quota"))).hasValue(ArchiveTrouble.Kind.REFUSING_WRITES);
        assertThat(kind(error(1, "storage engine failed: No space left on device")))
                .hasValue(ArchiveTrouble.Kind.REFUSING_WRITES);
        assertThat(kind(error(11000, "E11000 duplicate key")))
                .as("one document's refusal: a dead letter")
                .isEmpty();
        assertThat(kind(error(10107, "not primary")))
                .as("an election: retried, not an outage")
                .isEmpty();
        assertThat(kind(new IllegalStateException("the feeder's lease ran out")))
                .isEmpty();
    }

    /** Issue 40: an archive that stays connected but leaves the write unanswered is an outage too, named stalled. */
    @Test
    void aWriteLeftUnansweredOnAnOpenConnectionIsAStalledArchive() {
        assertThat(kind(new MongoOperationTimeoutException(
                        "Timeout while receiving message",
                        new MongoSocketReadTimeoutException(
                                "Timeout while receiving message", new ServerAddress(), null))))
                .as("the driver's deadline, waiting for the archive's reply")
                .hasValue(ArchiveTrouble.Kind.STALLED);
        assertThat(kind(new MongoExecutionTimeoutException(50, "operation exceeded time limit")))
                .as("the archive's own maxTimeMS")
                .hasValue(ArchiveTrouble.Kind.STALLED);
        assertThat(kind(new MongoOperationTimeoutException("Timed out while waiting for a server")))
                .as("the driver's deadline, no server selected: not reached at all")
                .hasValue(ArchiveTrouble.Kind.UNREACHABLE);
    }
}
