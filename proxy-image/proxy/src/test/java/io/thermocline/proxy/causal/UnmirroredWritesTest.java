package io.thermocline.proxy.causal;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.tiering.state.MirroredThrough;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What a linearizable archive read waits for, from the stream's view of the fast tier's writes (times are seconds). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class UnmirroredWritesTest {

    private static final Set<String> TIERED = Set.of("shop.orders", "shop.carts");

    @ParameterizedTest(
            name = "from {0} through {1}, orders {2}, carts {3}, present {4}, mirrored {5}, reads {6} -> {7}")
    @CsvSource(
            delimiter = '|',
            nullValues = "-",
            value = {
                // nothing written since mirrored-through: no wait
                "10 | 50 | 20 | -  | 50 | 30 | shop.orders | nothing",
                "10 | 50 | -  | -  | 50 | 10 | shop.orders | nothing",
                // a write after mirrored-through: wait for it, not for the present
                "10 | 50 | 40 | -  | 50 | 30 | shop.orders | wait 40",
                "10 | 60 | 55 | -  | 50 | 30 | shop.orders | wait 55",
                // only the read's namespaces count; null reads every tiered one
                "10 | 50 | 20 | 45 | 50 | 30 | shop.orders | nothing",
                "10 | 50 | 20 | 45 | 50 | 30 | -           | wait 45",
                "10 | 50 | 20 | 45 | 50 | 30 | shop.carts  | wait 45",
                "10 | 50 | 20 | 45 | 50 | 30 | other.coll  | nothing",
                // the stream has not read through the present: a write acknowledged before the read may be unseen
                "10 | 49 | 20 | -  | 50 | 30 | shop.orders | unknown",
                "10 | -  | -  | -  | 50 | 30 | shop.orders | unknown",
                // the stream started after mirrored-through: writes in between were never seen
                "31 | 50 | -  | -  | 50 | 30 | shop.orders | unknown",
                "30 | 50 | -  | -  | 50 | 30 | shop.orders | nothing",
                "-  | -  | -  | -  | 50 | 30 | shop.orders | unknown",
            })
    void waitsOnlyForSeenUnmirroredWritesToTheReadsNamespaces(
            Integer from,
            Integer through,
            Integer orders,
            Integer carts,
            int present,
            int mirrored,
            String reads,
            String expected) {
        FastTierWrites writes = new FastTierWrites();
        if (from != null) {
            writes.openedAt(t(from));
        }
        if (orders != null) {
            writes.wrote(List.of("shop.orders"), t(orders));
        }
        if (carts != null) {
            writes.wrote(List.of("shop.carts"), t(carts));
        }
        if (through != null) {
            writes.readThrough(t(through));
        }
        UnmirroredWrites.Verdict verdict = UnmirroredWrites.decide(
                writes.seen(),
                t(present),
                new MirroredThrough(t(mirrored)),
                reads == null ? null : Set.of(reads),
                TIERED);
        String got = verdict instanceof UnmirroredWrites.WaitFor w
                ? "wait " + w.latest().getTime()
                : verdict instanceof UnmirroredWrites.Nothing ? "nothing" : "unknown";
        assertThat(got).isEqualTo(expected);
    }

    @ParameterizedTest(name = "from {0} through {1}, orders {2}, carts {3}, mirrored {4}, reads {5} -> {6}")
    @CsvSource(
            delimiter = '|',
            nullValues = "-",
            value = {
                // nothing unmirrored to the read's namespaces as the stream stands: ask the archive at once
                "10 | 50 | 20 | -  | 30 | shop.orders | true",
                "10 | 50 | -  | -  | 10 | shop.orders | true",
                "10 | 50 | 20 | 45 | 30 | shop.orders | true",
                // an unmirrored write to them: the read would wait, its early answer would be thrown away
                "10 | 50 | 40 | -  | 30 | shop.orders | false",
                "10 | 50 | 20 | 45 | 30 | shop.carts  | false",
                // the stream cannot tell: not read yet, not open, or started after mirrored-through
                "10 | -  | -  | -  | 30 | shop.orders | false",
                "-  | -  | -  | -  | 30 | shop.orders | false",
                "31 | 50 | -  | -  | 30 | shop.orders | false",
            })
    void speculatesOnlyWhereTheStreamShowsNothingUnmirroredToTheReadsNamespaces(
            Integer from,
            Integer through,
            Integer orders,
            Integer carts,
            int mirrored,
            String reads,
            boolean expected) {
        FastTierWrites writes = new FastTierWrites();
        if (from != null) {
            writes.openedAt(t(from));
        }
        if (orders != null) {
            writes.wrote(List.of("shop.orders"), t(orders));
        }
        if (carts != null) {
            writes.wrote(List.of("shop.carts"), t(carts));
        }
        if (through != null) {
            writes.readThrough(t(through));
        }
        assertThat(UnmirroredWrites.worthSpeculating(writes.seen(), new MirroredThrough(t(mirrored)), Set.of(reads)))
                .isEqualTo(expected);
    }

    @Test
    void aReopenedStreamForgetsHowFarTheOldOneRead() {
        FastTierWrites writes = new FastTierWrites();
        writes.openedAt(t(10));
        writes.wrote(List.of("shop.orders"), t(20));
        writes.readThrough(t(50));
        writes.openedAt(t(60));
        assertThat(writes.seen().reached(t(50))).isFalse();
        assertThat(writes.seen().latest()).as("the writes seen stay").isEqualTo(Map.of("shop.orders", t(20)));
        writes.readThrough(t(59));
        writes.readThrough(t(58));
        assertThat(writes.seen().through()).as("never backwards").isEqualTo(t(59));
    }

    @Test
    void aReadWaitsForTheStreamToReachThePresent() throws Exception {
        FastTierWrites writes = new FastTierWrites();
        writes.openedAt(t(10));
        writes.readThrough(t(40));
        CompletableFuture<FastTierWrites.Seen> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return writes.awaitThrough(t(50), Duration.ofSeconds(20));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        while (writes.waits() == 0) {
            Thread.sleep(5);
        }
        assertThat(waiting).isNotDone();
        writes.readThrough(t(50));
        assertThat(waiting.get(10, TimeUnit.SECONDS).reached(t(50))).isTrue();
        assertThat(writes.awaitThrough(t(60), Duration.ofMillis(20)).reached(t(60)))
                .as("gives up after its wait")
                .isFalse();
    }

    @Test
    void aReadWaitsForTheLatestWriteAtOrBeforeThePresentNotOneTheStreamReadAfterIt() throws Exception {
        FastTierWrites writes = new FastTierWrites();
        writes.openedAt(t(10));
        writes.wrote(List.of("shop.orders"), t(40));
        writes.wrote(List.of("shop.orders"), t(55));
        writes.readThrough(t(60));
        FastTierWrites.Seen atPresent = writes.awaitThrough(t(50), Duration.ofSeconds(1));
        assertThat(UnmirroredWrites.decide(atPresent, t(50), new MirroredThrough(t(30)), Set.of("shop.orders"), TIERED))
                .as("the write after the present was acknowledged after the read arrived")
                .isEqualTo(new UnmirroredWrites.WaitFor(t(40)));
        assertThat(UnmirroredWrites.decide(atPresent, t(50), new MirroredThrough(t(40)), Set.of("shop.orders"), TIERED))
                .isEqualTo(new UnmirroredWrites.Nothing());
        assertThat(UnmirroredWrites.decide(
                        writes.seen(), t(50), new MirroredThrough(t(40)), Set.of("shop.orders"), TIERED))
                .as("the latest write seen, whenever it was")
                .isEqualTo(new UnmirroredWrites.WaitFor(t(55)));
    }

    @Test
    void forgottenWritesOnlyMakeAReadWaitLonger() {
        FastTierWrites writes = new FastTierWrites();
        writes.openedAt(t(10));
        int count = FastTierWrites.RECENT_PER_NAMESPACE + 10;
        for (int i = 0; i < count; i++) {
            writes.wrote(List.of("shop.orders"), t(100 + i));
        }
        writes.readThrough(t(100 + count));
        assertThat(writes.seenAtOrBefore(t(105)).latest("shop.orders"))
                .as("the writes up to 109 were forgotten: the latest of them stands for any at or before 105")
                .isEqualTo(t(109));
        assertThat(writes.seenAtOrBefore(t(500)).latest("shop.orders")).isEqualTo(t(500));
        assertThat(writes.seenAtOrBefore(t(50)).latest("shop.orders"))
                .as("nothing kept that early: never 'no write'")
                .isEqualTo(t(109));
        writes.wrote(List.of("shop.orders"), t(105));
        assertThat(writes.seenAtOrBefore(t(105)).latest("shop.orders")).isEqualTo(t(109));
        assertThat(writes.seen().latest("shop.orders")).isEqualTo(t(100 + count - 1));
        assertThat(writes.seenAtOrBefore(t(500)).latest("shop.carts")).isNull();
    }

    private static BsonTimestamp t(int seconds) {
        return new BsonTimestamp(seconds, 0);
    }
}
