package io.thermocline.tiering.warmer;

import static io.thermocline.tiering.TwoTiers.all;
import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import io.thermocline.embedded.member.Member;
import io.thermocline.embedded.storage.MemberStore;
import io.thermocline.tiering.OnTwoTiers;
import io.thermocline.tiering.TwoTiers;
import io.thermocline.tiering.metadata.WarmerCheckpoint;
import io.thermocline.tiering.window.Window;
import io.thermocline.tiering.worker.FaultInjection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.BsonArray;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonNull;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.Test;

/**
 * The warmer's "after the checkpoint" carries a range an index on the age field can seek to, beside the {@code $nor}
 * that decides (issue 39): the range leaves out no document the {@code $nor} admits, arrays and mixed encodings
 * included, and an archive with the index answers each batch by walking it from the checkpoint.
 */
class WarmerSeekTest extends OnTwoTiers {

    private static final Instant NOW = Instant.now();

    @Test
    void theRangeBesideTheNorLeavesOutNoDocumentTheNorAdmits() {
        Random random = new Random(39);
        List<BsonDocument> documents = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            BsonDocument document = new BsonDocument("_id", new BsonInt32(i));
            BsonValue age = age(random);
            if (age != null) {
                document.append("createdAt", age);
            }
            documents.add(document);
        }
        tiers.archiveOrders().insertMany(documents);
        Window window = new Window(TwoTiers.POLICY);
        Instant cutoff = window.cutoff(NOW);
        int seeking = 0;
        for (int i = 0; i < 150; i++) {
            BsonValue key = scalarAge(random);
            WarmerCheckpoint checkpoint =
                    new WarmerCheckpoint(cutoff, key, new BsonInt32(random.nextInt(300)), false, 0, NOW);
            Bson exact = Filters.and(window.atOrAfter(cutoff), Warmer.exactlyAfter(TwoTiers.POLICY, checkpoint));
            Bson walked =
                    Filters.and(window.atOrAfter(cutoff), Warmer.after(TwoTiers.POLICY, checkpoint, window, cutoff));
            seeking += Warmer.seekable("createdAt", key, window, cutoff).isPresent() ? 1 : 0;
            List<BsonDocument> expected = found(exact);
            assertThat(found(walked)).as("after %s", key).containsExactlyElementsOf(expected);
        }
        assertThat(seeking).as("checkpoints with a range").isGreaterThan(100);
    }

    @Test
    void anArchiveWithAnIndexOnTheAgeFieldIsWalkedFromEachCheckpoint() throws Exception {
        tiers.archiveOrders().createIndex(Indexes.ascending("createdAt"));
        List<BsonDocument> documents = new ArrayList<>();
        for (int i = 1; i <= 30; i++) {
            documents.add(new BsonDocument("_id", new BsonInt32(i))
                    .append(
                            "createdAt",
                            new BsonDateTime(NOW.minusSeconds(60L * i).toEpochMilli())));
        }
        for (int i = 31; i <= 35; i++) {
            documents.add(new BsonDocument("_id", new BsonInt32(i))
                    .append("createdAt", new BsonInt64(NOW.minusSeconds(60L * i).toEpochMilli())));
        }
        for (int i = 36; i <= 40; i++) {
            documents.add(new BsonDocument("_id", new BsonInt32(i))
                    .append(
                            "createdAt",
                            new BsonDateTime(NOW.minus(Duration.ofHours(3)).toEpochMilli())));
        }
        tiers.archiveOrders().insertMany(documents);
        MemberStore archive = tiers.embeddedArchive().orElseThrow().members().stream()
                .filter(Member::isPrimary)
                .findFirst()
                .orElseThrow()
                .state()
                .store();
        long walkedBefore = archive.findsThroughSecondaryIndexes();
        tiers.feeder();
        assertThat(tiers.warmer(4, TwoTiers.warmerOptions(FaultInjection.NONE)).warmAll())
                .isTrue();
        assertThat(all(tiers.fastOrders()))
                .extracting(d -> d.getInt32("_id").getValue())
                .as("the window's dates, then its numbers")
                .containsExactlyInAnyOrderElementsOf(
                        java.util.stream.IntStream.rangeClosed(1, 35).boxed().toList());
        assertThat(archive.findsThroughSecondaryIndexes() - walkedBefore)
                .as("each of the 9 batches and its number check walked the index")
                .isGreaterThanOrEqualTo(9);
    }

    private List<BsonDocument> found(Bson filter) {
        return tiers.archiveOrders()
                .find(filter)
                .sort(Sorts.descending("createdAt", "_id"))
                .into(new ArrayList<>());
    }

    /** Ages in every encoding the window reads and some it does not, arrays of them, null and missing. */
    private static BsonValue age(Random random) {
        return switch (random.nextInt(9)) {
            case 0, 1 -> scalarAge(random);
            case 2 -> new BsonArray(List.of(scalarAge(random), scalarAge(random)));
            case 3 -> new BsonArray(List.of(scalarAge(random)));
            case 4 -> new BsonArray();
            case 5 -> new BsonString("2026-01-01");
            case 6 -> BsonNull.VALUE;
            case 7 -> new BsonInt32(random.nextInt(100));
            default -> null;
        };
    }

    /** A date or an epoch-millisecond number within two hours of now (the window: one hour), some equal. */
    private static BsonValue scalarAge(Random random) {
        long millis = NOW.minusSeconds(60L * random.nextInt(120)).toEpochMilli();
        return switch (random.nextInt(4)) {
            case 0, 1 -> new BsonDateTime(millis);
            case 2 -> new BsonInt64(millis);
            default -> new BsonDouble(millis);
        };
    }
}
