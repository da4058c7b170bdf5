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

    /**
     * Issue 40: an archive whose primary applies the feeder's write but cannot have it confirmed on a majority is
     * trouble of the whole archive, named with the cause; a stepdown's write concern error is an election.
     */
    @Test
    void aWriteTheArchiveCannotConfirmOnAMajorityIsTroubleNamedWithItsCause() {
        ArchiveTrouble unconfirmed = ArchiveTrouble.of(
                        bulkWithConcernError(64, "WriteConcernFailed", "waiting for replication timed out"))
                .orElseThrow();
        assertThat(unconfirmed.kind()).isEqualTo(ArchiveTrouble.Kind.STALLED);
        assertThat(unconfirmed.cause()).contains("majority", "64", "waiting for replication timed out", "secondaries");
        assertThat(kind(bulkWithConcernError(50, "MaxTimeMSExpired", "operation exceeded time limit")))
                .as("the driver's deadline, spent waiting for the majority")
                .hasValue(ArchiveTrouble.Kind.STALLED);
        assertThat(kind(new com.mongodb.MongoWriteConcernException(
                        new com.mongodb.bulk.WriteConcernError(
                                64, "WriteConcernFailed", "waiting for replication timed out", new BsonDocument()),
                        null,
                        new ServerAddress())))
                .as("a single write's")
                .hasValue(ArchiveTrouble.Kind.STALLED);
        ArchiveTrouble unsatisfiable = ArchiveTrouble.of(
                        bulkWithConcernError(100, "UnsatisfiableWriteConcern", "Not enough data-bearing nodes"))
                .orElseThrow();
        assertThat(unsatisfiable.kind()).isEqualTo(ArchiveTrouble.Kind.REFUSING_WRITES);
        assertThat(unsatisfiable.cause()).contains("cannot satisfy", "Not enough data-bearing nodes");
        assertThat(kind(bulkWithConcernError(
                        189, "PrimarySteppedDown", "primary stepped down while waiting for replication")))
                .as("an election: retried, not an outage")
                .isEmpty();
    }

    private static com.mongodb.MongoBulkWriteException bulkWithConcernError(int code, String name, String message) {
        return new com.mongodb.MongoBulkWriteException(
                com.mongodb.bulk.BulkWriteResult.acknowledged(0, 1, 0, 0, java.util.List.of(), java.util.List.of()),
                java.util.List.of(),
                new com.mongodb.bulk.WriteConcernError(code, name, message, new BsonDocument()),
                new ServerAddress(),
                java.util.Set.of());
    }
}
