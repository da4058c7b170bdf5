package io.thermocline.tiering.backup;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.tiering.Namespace;
import io.thermocline.tiering.metadata.DeadLetters;
import io.thermocline.tiering.metadata.FeederCheckpoint;
import io.thermocline.tiering.metadata.FeederHealth;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.bson.BsonInt32;
import org.bson.BsonTimestamp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BackupPointStepTest {

    static final Instant NOW = Instant.parse("2026-12-04T20:00:00Z");
    static final BsonTimestamp TARGET = new BsonTimestamp(1000, 5);

    /**
     * mirrored: the checkpoint's time (seconds, inc 5); leaseLeft: seconds of the feeder's lease left (negative:
     * expired that long ago; 'none': never held); stillFor: seconds since mirrored-through last moved; left:
     * seconds to the deadline; letters: dead letters waiting.
     */
    @ParameterizedTest(name = "mirrored {0}, lease {1}, still {2} s, {3} s left, {4} letters -> {5}")
    @CsvSource({
            "1000, 10,   0,  10, 0, Reached",
            "1001, 10,   0,  10, 0, Reached",
            "999,  10,   0,  10, 0, Wait",
            "999,  -5,   0,  10, 0, Wait",             // a successor takes an expired lease within seconds
            "999,  -20,  0,  10, 0, FEEDER_STOPPED",
            "999,  none, 0,  10, 0, FEEDER_STOPPED",
            "999,  10,   60, 10, 0, FEEDER_NOT_ADVANCING",
            "999,  10,   59, 10, 0, Wait",
            "999,  10,   0,  0,  0, TIMED_OUT",
            "1000, 10,   0,  0,  0, Reached",            // reached at the deadline is reached
            "1000, 10,   0,  10, 1, DEAD_LETTERS",       // covered, but the archive lacks a document
            "999,  -20,  60, 0,  2, DEAD_LETTERS",       // the one thing a person must fix first
            "1000, none, 0,  10, 0, Reached",            // the archive holds it all, whoever mirrored it
    })
    void decides(long mirrored, String leaseLeft, long stillFor, long left, int letters, String expected) {
        boolean held = !leaseLeft.equals("none");
        FeederCheckpoint c = new FeederCheckpoint(null, new BsonTimestamp((int) mirrored, 5), null, 0, 1.5, 3,
                held ? "feeder-1" : null, held ? NOW.plusSeconds(Long.parseLong(leaseLeft)) : Instant.EPOCH, 1);
        List<DeadLetters.Letter> waiting = letters == 0 ? List.of() : List.of(new DeadLetters.Letter(new Namespace("shop", "orders"),
                new BsonInt32(7), "upsert", 11000, "E11000 duplicate key", NOW, NOW, 3));
        BackupPointStep step = BackupPointStep.decide(new BackupPointStep.Facts(TARGET, c, waiting, letters, NOW,
                NOW.minusSeconds(stillFor), NOW.plusSeconds(left), Duration.ofSeconds(15), Duration.ofSeconds(60), null));
        String got = step instanceof BackupPointStep.Refused r ? r.reason().name() : step.getClass().getSimpleName();
        assertThat(got).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({"1, false", "2, true"})
    void deadLettersAreNamedAndMoreAreAnnounced(int count, boolean more) {
        FeederCheckpoint c = new FeederCheckpoint(null, TARGET, null, 0, 0, 0, "feeder-1", NOW.plusSeconds(10), 1);
        BackupPointStep step = BackupPointStep.decide(new BackupPointStep.Facts(TARGET, c, List.of(new DeadLetters.Letter(
                new Namespace("shop", "orders"), new BsonInt32(7), "upsert", 11000, "E11000 duplicate key", NOW, NOW, 3)), count, NOW, NOW,
                NOW.plusSeconds(10), Duration.ofSeconds(15), Duration.ofSeconds(60), null));
        String message = ((BackupPointStep.Refused) step).message();
        assertThat(message).contains(count + " dead letter(s)").contains("shop.orders {\"_id\": 7}: upsert failed with code 11000");
        assertThat(message.contains("; ...")).isEqualTo(more);
    }

    /**
     * why: what the feeder reports of the archive ('none': it takes the mirror writes); mirrored: the checkpoint's time;
     * stillFor: seconds since mirrored-through last moved. An archive refusing writes is refused at once with its cause
     * (a full disk does not pass by waiting); an unreachable one is waited for (an election), and named once the feeder
     * stops advancing.
     */
    @ParameterizedTest(name = "archive {0}, mirrored {1}, still {2} s -> {3}")
    @CsvSource({
            "refusing_writes, 999,  0,  ARCHIVE_REFUSES_WRITES",
            "refusing_writes, 1000, 0,  Reached",                 // everything before the target is in the archive already
            "unreachable,     999,  0,  Wait",
            "unreachable,     999,  60, FEEDER_NOT_ADVANCING",
            "none,            999,  0,  Wait",
    })
    void anArchiveRefusingWritesIsRefusedAtOnceWithItsCause(String why, long mirrored, long stillFor, String expected) {
        FeederCheckpoint c = new FeederCheckpoint(null, new BsonTimestamp((int) mirrored, 5), null, 0, 4.5, 12, "feeder-1",
                NOW.plusSeconds(10), 1);
        FeederHealth.ArchiveUnavailable down = why.equals("none") ? null
                : new FeederHealth.ArchiveUnavailable(why, NOW.minusSeconds(90), "OutOfDiskSpace (14031): disk full");
        BackupPointStep step = BackupPointStep.decide(new BackupPointStep.Facts(TARGET, c, List.of(), 0, NOW, NOW.minusSeconds(stillFor),
                NOW.plusSeconds(300), Duration.ofSeconds(15), Duration.ofSeconds(60), down));
        String got = step instanceof BackupPointStep.Refused r ? r.reason().name() : step.getClass().getSimpleName();
        assertThat(got).isEqualTo(expected);
        if (step instanceof BackupPointStep.Refused refused) {
            assertThat(refused.message()).contains("archive", "OutOfDiskSpace (14031): disk full", NOW.minusSeconds(90).toString());
        }
    }
}
