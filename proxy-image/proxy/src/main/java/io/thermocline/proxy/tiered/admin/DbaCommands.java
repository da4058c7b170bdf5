package io.thermocline.proxy.tiered.admin;

import io.thermocline.proxy.command.CommandTraits;
import io.thermocline.proxy.command.Request;
import io.thermocline.proxy.gateway.TierGateways;
import io.thermocline.proxy.routing.CommandClass;
import io.thermocline.proxy.routing.RoutingTable;
import io.thermocline.wire.OpMsg;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

/**
 * The DBA commands a tiered proxy answers from both tiers (docs/proxy.md, "DBA commands"): which command goes to
 * which of {@link TierOperations} and {@link TierStatistics}. Outside a transaction only; every other command is left
 * to the tiered routing.
 */
public final class DbaCommands {

    private DbaCommands() {}

    /** The reply to {@code request} (classified as {@code cls}) when it is a DBA command answered from both tiers. */
    public static Optional<CompletableFuture<RawBsonDocument>> serve(
            TierGateways gateways, Request request, CommandClass cls, RoutingTable table) {
        OpMsg msg = request.msg();
        BsonDocument command = msg.command();
        CommandTraits traits = request.traits();
        if (cls instanceof CommandClass.Admin admin && !traits.inTransaction()) {
            // a DBA sees and kills the operations of both tiers, as through a mongos (docs/proxy.md, "DBA commands")
            if (admin.commandName().equals("currentOp")) {
                return Optional.of(TierOperations.currentOp(gateways, request));
            }
            if (admin.commandName().equals("serverStatus")) {
                return Optional.of(TierOperations.serverStatus(gateways, request));
            }
            if (admin.commandName().equals("killOp")) {
                return Optional.of(TierOperations.killOp(gateways, request, command));
            }
            if (admin.commandName().equals("replSetGetStatus")) {
                return Optional.of(TierOperations.replSetGetStatus(gateways, request));
            }
            // storage statistics of tiered data count each document once and the disk of both tiers (docs/proxy.md)
            if (admin.commandName().equals("dbStats") && table.hasTieredCollectionIn(msg.database())) {
                return Optional.of(TierStatistics.dbStats(gateways, request));
            }
            if (admin.commandName().equals("collStats")
                    && command.isString(command.getFirstKey())
                    && table.tiered(msg.database() + "."
                            + command.getString(command.getFirstKey()).getValue())) {
                return Optional.of(TierStatistics.collStats(gateways, request));
            }
        }
        if (cls instanceof CommandClass.Aggregate aggregate
                && !traits.inTransaction()
                && aggregate.collection() != null
                && table.tiered(aggregate.database() + "." + aggregate.collection())
                && TierStatistics.isCollStatsAlone(aggregate.pipeline())) {
            return Optional.of(TierStatistics.collStatsStage(gateways, request));
        }
        if (cls instanceof CommandClass.Aggregate aggregate
                && !traits.inTransaction()
                && TierOperations.isCurrentOpStage(aggregate.pipeline())) {
            return Optional.of(TierOperations.currentOpStage(gateways, request, command));
        }
        return Optional.empty();
    }

    /**
     * {@code listDatabases} with the fast tier's disk added to the databases holding tiered collections; empty
     * when only names are asked (or nothing is tiered): the archive's answer is the whole answer then.
     */
    public static Optional<CompletableFuture<RawBsonDocument>> listDatabases(
            TierGateways gateways, Request request, RoutingTable table) {
        BsonDocument command = request.msg().command();
        org.bson.BsonValue only = command.get("nameOnly");
        boolean nameOnly = only != null
                && (only.isBoolean()
                        ? only.asBoolean().getValue()
                        : only.isNumber() && only.asNumber().doubleValue() != 0);
        if (table.policies().isEmpty() || nameOnly || request.traits().inTransaction()) {
            return Optional.empty();
        }
        return Optional.of(TierStatistics.listDatabases(gateways, request, table));
    }
}
