package io.thermocline.proxy.tiered.admin;

import static io.thermocline.proxy.tiered.admin.AnsweringTiers.requestOf;
import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.topology.Tier;
import io.thermocline.wire.OpMsg;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

/** currentOp lists both tiers' operations with tier-prefixed opids; killOp goes to the tier its prefix names. */
class TierOperationsTest {

    private record Sent(Tier tier, BsonDocument command) {}

    private static TierGateways answering(List<Sent> sent, String fastReply, String archiveReply) {
        return AnsweringTiers.answering((tier, msg) -> {
            sent.add(new Sent(tier, msg.body()));
            return OpMsg.raw(BsonDocument.parse(tier == Tier.FAST ? fastReply : archiveReply));
        });
    }

    @Test
    void currentOpListsTheOperationsOfBothTiersWithTierPrefixedOpids() {
        List<Sent> sent = new ArrayList<>();
        TierGateways call = answering(
                sent,
                "{inprog: [{opid: 12, op: 'query', ns: 'shop.orders'}], ok: 1}",
                "{inprog: [{opid: 7, op: 'update'}, {opid: {$numberLong: '3000000000'}, op: 'getmore'}], ok: 1}");
        RawBsonDocument reply = TierOperations.currentOp(
                        call, requestOf(OpMsg.request(1, BsonDocument.parse("{currentOp: 1, $db: 'admin'}"))))
                .join();
        assertThat(sent).extracting(Sent::tier).containsExactlyInAnyOrder(Tier.FAST, Tier.ARCHIVE);
        assertThat(reply.getArray("inprog").stream()
                        .map(op -> op.asDocument().getString("opid").getValue()))
                .containsExactly("fast:12", "archive:7", "archive:3000000000");
        assertThat(reply.getArray("inprog")
                        .get(0)
                        .asDocument()
                        .getString("tier")
                        .getValue())
                .isEqualTo("fast");
        assertThat(reply.getNumber("ok").doubleValue()).isEqualTo(1.0);
    }

    @Test
    void aTierThatRefusesCurrentOpIsTheAnswer() {
        TierGateways call =
                answering(new ArrayList<>(), "{ok: 0, errmsg: 'not authorized', code: 13}", "{inprog: [], ok: 1}");
        RawBsonDocument reply = TierOperations.currentOp(
                        call, requestOf(OpMsg.request(1, BsonDocument.parse("{currentOp: 1, $db: 'admin'}"))))
                .join();
        assertThat(reply.getInt32("code").getValue()).isEqualTo(13);
    }

    @Test
    void killOpGoesToTheTierItsPrefixNamesWithTheTiersOwnOpid() {
        List<Sent> sent = new ArrayList<>();
        TierGateways call =
                answering(sent, "{info: 'attempting to kill op', ok: 1}", "{info: 'attempting to kill op', ok: 1}");
        TierOperations.killOp(
                        call,
                        requestOf(OpMsg.request(1, BsonDocument.parse("{killOp: 1, op: 'fast:12', $db: 'admin'}"))),
                        BsonDocument.parse("{killOp: 1, op: 'fast:12', $db: 'admin'}"))
                .join();
        assertThat(sent).containsExactly(new Sent(Tier.FAST, BsonDocument.parse("{killOp: 1, op: 12, $db: 'admin'}")));
    }

    @Test
    void killOpTargets() {
        assertThat(TierOperations.target(new BsonString("archive:7")))
                .isEqualTo(new TierOperations.KillTarget.Routed(Tier.ARCHIVE, new BsonInt32(7)));
        assertThat(TierOperations.target(new BsonInt32(7)))
                .as("an unprefixed opid is the archive's")
                .isEqualTo(new TierOperations.KillTarget.Routed(Tier.ARCHIVE, new BsonInt32(7)));
        assertThat(TierOperations.target(new BsonString("archive:shard0:7")))
                .as("a sharded archive's own opid passes on")
                .isEqualTo(new TierOperations.KillTarget.Routed(Tier.ARCHIVE, new BsonString("shard0:7")));
        assertThat(TierOperations.target(new BsonString("warm:7")))
                .isInstanceOf(TierOperations.KillTarget.Malformed.class);
        assertThat(TierOperations.target(null)).isInstanceOf(TierOperations.KillTarget.Malformed.class);
    }

    @Test
    void aKillOpWithAnUnknownTierIsRefusedWithoutBeingSent() {
        List<Sent> sent = new ArrayList<>();
        RawBsonDocument reply = TierOperations.killOp(
                        answering(sent, "{ok: 1}", "{ok: 1}"),
                        requestOf(OpMsg.request(1, BsonDocument.parse("{killOp: 1, op: 'warm:1'}"))),
                        BsonDocument.parse("{killOp: 1, op: 'warm:1'}"))
                .join();
        assertThat(sent).isEmpty();
        assertThat(reply.getString("errmsg").getValue()).contains("'warm' is not a tier");
    }

    @Test
    void serverStatusKeepsTheArchivesAnswerAndAddsASectionPerTier() {
        TierGateways call = answering(
                new ArrayList<>(),
                "{host: 'fast-0:27017', connections: {current: 4}, ok: 1, operationTime: {$timestamp: {t: 1, i: 1}}}",
                "{host: 'a-0:27017', connections: {current: 90}, ok: 1}");
        RawBsonDocument reply = TierOperations.serverStatus(
                        call, requestOf(OpMsg.request(1, BsonDocument.parse("{serverStatus: 1, $db: 'admin'}"))))
                .join();
        assertThat(reply.getString("host").getValue())
                .as("the top level stays the archive's")
                .isEqualTo("a-0:27017");
        assertThat(reply.getDocument("tiers")
                        .getDocument("fast")
                        .getDocument("connections")
                        .getInt32("current")
                        .getValue())
                .isEqualTo(4);
        assertThat(reply.getDocument("tiers").getDocument("fast").containsKey("operationTime"))
                .isFalse();
        assertThat(reply.getDocument("tiers")
                        .getDocument("archive")
                        .getString("host")
                        .getValue())
                .isEqualTo("a-0:27017");
        assertThat(reply.getNumber("ok").doubleValue()).isEqualTo(1.0);
    }

    @Test
    void aFastTierThatCannotAnswerServerStatusShowsItsErrorInItsSection() {
        TierGateways call =
                answering(new ArrayList<>(), "{ok: 0, errmsg: 'no primary', code: 189}", "{host: 'a-0:27017', ok: 1}");
        RawBsonDocument reply = TierOperations.serverStatus(
                        call, requestOf(OpMsg.request(1, BsonDocument.parse("{serverStatus: 1}"))))
                .join();
        assertThat(reply.getDocument("tiers")
                        .getDocument("fast")
                        .getInt32("code")
                        .getValue())
                .isEqualTo(189);
        assertThat(reply.getNumber("ok").doubleValue()).isEqualTo(1.0);
    }

    @Test
    void currentOpStageListsTheOperationsOfBothTiersInOneBatch() {
        List<Sent> sent = new ArrayList<>();
        TierGateways call = answering(
                sent,
                "{cursor: {firstBatch: [{opid: 12, op: 'query'}], id: {$numberLong: '0'}, ns: 'admin.$cmd.aggregate'}, ok: 1}",
                "{cursor: {firstBatch: [{opid: 7, op: 'update'}, {op: 'none', desc: 'conn9'}], id: {$numberLong: '0'},"
                        + " ns: 'admin.$cmd.aggregate'}, ok: 1}");
        BsonDocument command = BsonDocument.parse("{aggregate: 1, pipeline: [{$currentOp: {allUsers: true}},"
                + " {$match: {active: true}}, {$project: {opid: 1, op: 1}}], cursor: {batchSize: 2}, $db: 'admin'}");
        RawBsonDocument reply = TierOperations.currentOpStage(call, requestOf(OpMsg.request(1, command)), command)
                .join();
        assertThat(sent).extracting(Sent::tier).containsExactlyInAnyOrder(Tier.FAST, Tier.ARCHIVE);
        // each tier runs the whole pipeline and answers all of it in its first batch
        assertThat(sent.get(0).command().getArray("pipeline")).isEqualTo(command.getArray("pipeline"));
        assertThat(sent.get(0)
                        .command()
                        .getDocument("cursor")
                        .getInt32("batchSize")
                        .getValue())
                .isEqualTo(Integer.MAX_VALUE);
        BsonDocument cursor = reply.getDocument("cursor");
        assertThat(cursor.getInt64("id").getValue()).isZero();
        assertThat(cursor.getArray("firstBatch").stream()
                        .map(op -> op.asDocument().getString("tier").getValue()))
                .containsExactly("fast", "archive", "archive");
        assertThat(cursor.getArray("firstBatch")
                        .get(0)
                        .asDocument()
                        .getString("opid")
                        .getValue())
                .isEqualTo("fast:12");
        assertThat(cursor.getArray("firstBatch")
                        .get(1)
                        .asDocument()
                        .getString("opid")
                        .getValue())
                .isEqualTo("archive:7");
        assertThat(reply.getNumber("ok").doubleValue()).isEqualTo(1.0);
    }

    @Test
    void currentOpStageFollowedByAStageThatCombinesOperationsIsRefusedWithoutBeingSent() {
        List<Sent> sent = new ArrayList<>();
        BsonDocument command = BsonDocument.parse(
                "{aggregate: 1, pipeline: [{$currentOp: {}}, {$match: {active: true}}, {$group: {_id: '$op', n: {$sum: 1}}}],"
                        + " cursor: {}, $db: 'admin'}");
        RawBsonDocument reply = TierOperations.currentOpStage(
                        answering(sent, "{ok: 1}", "{ok: 1}"), requestOf(OpMsg.request(1, command)), command)
                .join();
        assertThat(sent).isEmpty();
        assertThat(reply.getInt32("code").getValue()).isEqualTo(2);
        assertThat(reply.getString("errmsg").getValue()).contains("'$group'");
    }

    @Test
    void currentOpStageOfATierThatNeedsAGetMoreIsAnErrorNotAPartialList() {
        TierGateways call = answering(
                new ArrayList<>(),
                "{cursor: {firstBatch: [{opid: 1}], id: {$numberLong: '0'}, ns: 'admin.$cmd.aggregate'}, ok: 1}",
                "{cursor: {firstBatch: [{opid: 2}], id: {$numberLong: '4242'}, ns: 'admin.$cmd.aggregate'}, ok: 1}");
        BsonDocument command =
                BsonDocument.parse("{aggregate: 1, pipeline: [{$currentOp: {}}], cursor: {}, $db: 'admin'}");
        RawBsonDocument reply = TierOperations.currentOpStage(call, requestOf(OpMsg.request(1, command)), command)
                .join();
        assertThat(reply.getNumber("ok").intValue()).isZero();
        assertThat(reply.getString("errmsg").getValue()).contains("$match");
    }

    @Test
    void replSetGetStatusKeepsTheArchivesSetAndAddsBothTiersMembers() {
        TierGateways call = answering(
                new ArrayList<>(),
                "{set: 'fast', myState: 1, members: [{_id: 0, name: 'fast-0:27017', stateStr: 'PRIMARY'},"
                        + " {_id: 1, name: 'fast-1:27017', stateStr: 'SECONDARY'}], ok: 1}",
                "{set: 'rs0', myState: 1, members: [{_id: 0, name: 'db-0:27017', stateStr: 'PRIMARY'}], ok: 1}");
        RawBsonDocument reply = TierOperations.replSetGetStatus(
                        call, requestOf(OpMsg.request(1, BsonDocument.parse("{replSetGetStatus: 1, $db: 'admin'}"))))
                .join();
        assertThat(reply.getString("set").getValue())
                .as("the set the application knew")
                .isEqualTo("rs0");
        assertThat(reply.getArray("members")).hasSize(1);
        assertThat(reply.getDocument("tiers").getDocument("fast").getArray("members"))
                .hasSize(2);
        assertThat(reply.getDocument("tiers")
                        .getDocument("archive")
                        .getString("set")
                        .getValue())
                .isEqualTo("rs0");
    }
}
