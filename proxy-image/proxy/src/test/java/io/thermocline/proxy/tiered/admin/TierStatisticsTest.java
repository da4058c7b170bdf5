package io.thermocline.proxy.tiered.admin;

import static io.thermocline.proxy.tiered.admin.AnsweringTiers.requestOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.tiering.state.TieringState;
import io.thermocline.wire.OpMsg;
import java.time.Duration;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

/**
 * Storage statistics over both tiers: each document counted once (the archive holds every one, the fast tier copies
 * of the recent ones), the disk of both tiers summed.
 */
class TierStatisticsTest {

    private static TierGateways answering(String fastReply, String archiveReply) {
        return AnsweringTiers.answering(
                (tier, msg) -> OpMsg.raw(BsonDocument.parse(tier == Tier.FAST ? fastReply : archiveReply)));
    }

    private static Request request(String command) {
        return requestOf(OpMsg.request(1, BsonDocument.parse(command)));
    }

    @Test
    void dbStatsCountsEachDocumentOnceAndTheDiskOfBothTiers() {
        TierGateways call = answering(
                "{db: 'shop', collections: 4, objects: 1600, avgObjSize: 200, dataSize: 320000, storageSize: 180000,"
                        + " indexes: 6, indexSize: 60000, totalSize: 240000, fsUsedSize: 10, fsTotalSize: 100, ok: 1,"
                        + " operationTime: {$timestamp: {t: 1, i: 1}}}",
                "{db: 'shop', collections: 3, objects: 20000, avgObjSize: 200, dataSize: 4000000, storageSize: 2000000,"
                        + " indexes: 4, indexSize: 500000, totalSize: 2500000, fsUsedSize: 7000, fsTotalSize: 90000, ok: 1}");
        RawBsonDocument reply = TierStatistics.dbStats(call, request("{dbStats: 1, $db: 'shop'}"))
                .join();
        // the fast tier's documents are copies of the archive's recent ones: counted once
        assertThat(reply.getNumber("objects").longValue()).isEqualTo(20000);
        assertThat(reply.getNumber("dataSize").longValue()).isEqualTo(4000000);
        assertThat(reply.getNumber("collections").longValue()).isEqualTo(3);
        assertThat(reply.getNumber("indexes").longValue()).isEqualTo(4);
        // both tiers' disk
        assertThat(reply.getNumber("storageSize").longValue()).isEqualTo(2180000);
        assertThat(reply.getNumber("indexSize").longValue()).isEqualTo(560000);
        assertThat(reply.getNumber("totalSize").longValue()).isEqualTo(2740000);
        assertThat(reply.getNumber("fsUsedSize").longValue())
                .as("the archive's filesystem")
                .isEqualTo(7000);
        assertThat(reply.getDocument("tiers")
                        .getDocument("fast")
                        .getNumber("objects")
                        .longValue())
                .isEqualTo(1600);
        assertThat(reply.getDocument("tiers").getDocument("fast").containsKey("operationTime"))
                .isFalse();
        assertThat(reply.getDocument("tiers")
                        .getDocument("archive")
                        .getNumber("storageSize")
                        .longValue())
                .isEqualTo(2000000);
        assertThat(reply.getNumber("ok").intValue()).isEqualTo(1);
    }

    @Test
    void collStatsSumsEachIndexAndWidensASumPastAnInt() {
        TierGateways call = answering(
                "{ns: 'shop.orders', count: 1600, size: 320000, storageSize: 2000000000, totalIndexSize: 60000,"
                        + " totalSize: 2000060000, nindexes: 2, indexSizes: {_id_: 40000, createdAt_1: 20000}, ok: 1}",
                "{ns: 'shop.orders', count: 20000, size: 4000000, storageSize: 2000000000, totalIndexSize: 500000,"
                        + " totalSize: 2000500000, nindexes: 2, indexSizes: {_id_: 300000, createdAt_1: 200000}, ok: 1}");
        RawBsonDocument reply = TierStatistics.collStats(call, request("{collStats: 'orders', $db: 'shop'}"))
                .join();
        assertThat(reply.getNumber("count").longValue()).isEqualTo(20000);
        assertThat(reply.getNumber("size").longValue()).isEqualTo(4000000);
        assertThat(reply.get("storageSize").isInt64()).isTrue();
        assertThat(reply.getNumber("storageSize").longValue()).isEqualTo(4000000000L);
        assertThat(reply.getDocument("indexSizes").getNumber("_id_").longValue())
                .isEqualTo(340000);
        assertThat(reply.getDocument("indexSizes").getNumber("createdAt_1").longValue())
                .isEqualTo(220000);
        assertThat(reply.getNumber("nindexes").longValue()).isEqualTo(2);
    }

    @Test
    void aFastTierThatCannotAnswerLeavesTheArchivesNumbersAndShowsItsError() {
        TierGateways call = answering(
                "{ok: 0, errmsg: 'no primary', code: 189}",
                "{db: 'shop', objects: 20000, storageSize: 2000000, ok: 1}");
        RawBsonDocument reply = TierStatistics.dbStats(call, request("{dbStats: 1, $db: 'shop'}"))
                .join();
        assertThat(reply.getNumber("storageSize").longValue()).isEqualTo(2000000);
        assertThat(reply.getDocument("tiers")
                        .getDocument("fast")
                        .getInt32("code")
                        .getValue())
                .isEqualTo(189);
        assertThat(reply.getNumber("ok").intValue()).isEqualTo(1);
    }

    @Test
    void collStatsStageIsOneDocumentWithStorageSummedAndTheArchivesCount() {
        TierGateways call = answering(
                "{cursor: {firstBatch: [{ns: 'shop.orders', host: 'fast-0', count: 1600,"
                        + " storageStats: {count: 1600, size: 320000, storageSize: 180000, totalIndexSize: 60000, totalSize: 240000}}],"
                        + " id: {$numberLong: '0'}, ns: 'shop.orders'}, ok: 1}",
                "{cursor: {firstBatch: [{ns: 'shop.orders', host: 'db-0', count: 20000,"
                        + " storageStats: {count: 20000, size: 4000000, storageSize: 2000000, totalIndexSize: 500000, totalSize: 2500000}}],"
                        + " id: {$numberLong: '0'}, ns: 'shop.orders'}, ok: 1}");
        RawBsonDocument reply = TierStatistics.collStatsStage(
                        call,
                        request(
                                "{aggregate: 'orders', pipeline: [{$collStats: {storageStats: {}, count: {}}}], cursor: {}, $db: 'shop'}"))
                .join();
        List<org.bson.BsonValue> batch =
                reply.getDocument("cursor").getArray("firstBatch").getValues();
        assertThat(batch).hasSize(1);
        BsonDocument stats = batch.get(0).asDocument();
        assertThat(stats.getNumber("count").longValue()).isEqualTo(20000);
        assertThat(stats.getString("host").getValue()).isEqualTo("db-0");
        assertThat(stats.getDocument("storageStats").getNumber("count").longValue())
                .isEqualTo(20000);
        assertThat(stats.getDocument("storageStats").getNumber("storageSize").longValue())
                .isEqualTo(2180000);
        assertThat(stats.getDocument("storageStats").getNumber("totalSize").longValue())
                .isEqualTo(2740000);
        assertThat(stats.getDocument("tiers")
                        .getDocument("fast")
                        .getString("host")
                        .getValue())
                .isEqualTo("fast-0");
    }

    @Test
    void collStatsStageAloneIsMergedButNotFollowedByOtherStages() {
        assertThat(TierStatistics.isCollStatsAlone(
                        BsonDocument.parse("{p: [{$collStats: {count: {}}}]}").getArray("p")))
                .isTrue();
        assertThat(TierStatistics.isCollStatsAlone(
                        BsonDocument.parse("{p: [{$collStats: {count: {}}}, {$project: {count: 1}}]}")
                                .getArray("p")))
                .isFalse();
    }

    @Test
    void listDatabasesAddsTheFastTiersDiskToDatabasesHoldingTieredCollectionsOnly() {
        RoutingTable table = RoutingTable.of(
                List.of(new CollectionPolicy("shop", "orders", "createdAt", Duration.ofDays(30))),
                TieringState.initial());
        RawBsonDocument fast =
                OpMsg.raw(BsonDocument.parse("{databases: [{name: 'shop', sizeOnDisk: 240000, empty: false},"
                        + " {name: 'thermocline', sizeOnDisk: 90000, empty: false}, {name: 'admin', sizeOnDisk: 40000, empty: false}],"
                        + " totalSize: 370000, totalSizeMb: 0, ok: 1}"));
        RawBsonDocument archive =
                OpMsg.raw(BsonDocument.parse("{databases: [{name: 'shop', sizeOnDisk: 2500000, empty: false},"
                        + " {name: 'crm', sizeOnDisk: 100000, empty: false}, {name: 'admin', sizeOnDisk: 40000, empty: false}],"
                        + " totalSize: 2640000, totalSizeMb: 2, ok: 1}"));
        RawBsonDocument reply = TierStatistics.listDatabases(fast, archive, table);
        assertThat(reply.getArray("databases").stream()
                        .map(d -> d.asDocument().getString("name").getValue()))
                .as("the archive's list: Thermocline's metadata database is not the application's")
                .containsExactly("shop", "crm", "admin");
        assertThat(reply.getArray("databases")
                        .get(0)
                        .asDocument()
                        .getNumber("sizeOnDisk")
                        .longValue())
                .isEqualTo(2740000);
        assertThat(reply.getArray("databases")
                        .get(1)
                        .asDocument()
                        .getNumber("sizeOnDisk")
                        .longValue())
                .isEqualTo(100000);
        assertThat(reply.getArray("databases")
                        .get(2)
                        .asDocument()
                        .getNumber("sizeOnDisk")
                        .longValue())
                .isEqualTo(40000);
        assertThat(reply.getNumber("totalSize").longValue()).isEqualTo(2880000);
        assertThat(reply.getNumber("totalSizeMb").longValue()).isEqualTo(2);
    }
}
