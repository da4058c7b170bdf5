package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Routes the statements of a multi-statement transaction. A transaction runs on one replica set:
 * the fast tier when every statement on a tiered namespace is provably hot (or a point operation whose
 * document can be promoted first), the archive when it touches only untiered namespaces. Anything else
 * fails with an error naming the statement and the reason, never a partial or stale answer.
 */
public final class TransactionRouter {

    /** Pipeline outcomes that touch no tiered data the archive could serve stale inside a transaction. */
    private static final Set<Reason> ARCHIVE_PIPELINES = Set.of(Reason.UNTIERED_NAMESPACE, Reason.NO_SOURCE_NAMESPACE);

    private TransactionRouter() {
    }

    /**
     * @param statement the classified statement
     * @param pinned    the tier earlier statements of the transaction run on, null for the first statement
     */
    public static TransactionRoute route(CommandClass statement, RoutingTable table, TransactionTier pinned) {
        TransactionRoute wanted = wanted(statement, table, pinned);
        TransactionTier tier = wanted instanceof TransactionRoute.Run run ? run.tier()
                : wanted instanceof TransactionRoute.PromoteThenRun ? TransactionTier.FAST : null;
        if (pinned != null && tier != null && tier != pinned) {
            return new TransactionRoute.Refused(Reason.TRANSACTION_SPANS_TIERS,
                    "this transaction runs on the " + label(pinned) + " and its " + statement.commandName() + " needs the "
                            + label(tier) + " (" + wanted.reason().label() + "); a transaction cannot span the fast tier and "
                            + "the archive: keep tiered and untiered collections in separate transactions");
        }
        return wanted;
    }

    private static TransactionRoute wanted(CommandClass statement, RoutingTable table, TransactionTier pinned) {
        TransactionTier current = pinned == null ? TransactionTier.ARCHIVE : pinned;
        if (statement instanceof CommandClass.Read read) {
            return read(read, table);
        }
        if (statement instanceof CommandClass.Aggregate aggregate) {
            return aggregate(aggregate, table);
        }
        if (statement instanceof CommandClass.Write write) {
            return write(write, table);
        }
        if (statement instanceof CommandClass.PassThrough pass) {
            return new TransactionRoute.Run(TransactionTier.ARCHIVE, pass.reason());
        }
        if (statement instanceof CommandClass.Ddl ddl) {
            return new TransactionRoute.Refused(Reason.DDL_ON_TIERED_NAMESPACE,
                    ddl.commandName() + " on tiered namespace " + String.join(", ", ddl.namespaces()) + " must apply to both tiers "
                            + "and cannot run inside a transaction; run it outside the transaction");
        }
        if (statement instanceof CommandClass.Rejected rejected) {
            return new TransactionRoute.Refused(rejected.reason(), rejected.message());
        }
        if (statement instanceof CommandClass.CursorOwned) {
            return new TransactionRoute.Run(current, Reason.CURSOR_OWNER);
        }
        if (statement instanceof CommandClass.Session) {
            return new TransactionRoute.Run(current, Reason.SESSION_COMMAND);
        }
        // commit/abort, and anything not transactional: the pinned tier's server answers or refuses it.
        return new TransactionRoute.Run(current, Reason.TRANSACTION_PINNED_TIER);
    }

    private static TransactionRoute read(CommandClass.Read read, RoutingTable table) {
        CollectionPolicy policy = table.policy(read.namespace()).orElse(null);
        ReadRoute route = ReadRouter.route(read.filter(), policy, table.coverage(read.namespace()), read.collation());
        return fromReadRoute(route, read.commandName(), read.namespace(), Set.of(Reason.UNTIERED_NAMESPACE), table);
    }

    private static TransactionRoute aggregate(CommandClass.Aggregate aggregate, RoutingTable table) {
        ReadRoute route = PipelineRouter.route(aggregate.database(), aggregate.collection(), aggregate.pipeline(), table);
        String ns = aggregate.database() + "." + (aggregate.collection() == null ? "$cmd.aggregate" : aggregate.collection());
        return fromReadRoute(route, "aggregate", ns, ARCHIVE_PIPELINES, table);
    }

    private static TransactionRoute fromReadRoute(ReadRoute route, String command, String namespace, Set<Reason> archiveAllowed,
                                                  RoutingTable table) {
        if (route instanceof ReadRoute.FastTier) {
            return new TransactionRoute.Run(TransactionTier.FAST, route.reason());
        }
        if (route instanceof ReadRoute.PointReadFastFirst point) {
            // Inside a transaction the archive's answer would not be part of the snapshot: promote instead.
            return new TransactionRoute.PromoteThenRun(List.of(point.id()), point.reason());
        }
        if (route instanceof ReadRoute.Refused refused) {
            return new TransactionRoute.Refused(refused.reason(), refused.message());
        }
        return archiveAllowed.contains(route.reason())
                ? new TransactionRoute.Run(TransactionTier.ARCHIVE, route.reason())
                : notProvablyHot(command, namespace, route.reason(), table);
    }

    private static TransactionRoute write(CommandClass.Write write, RoutingTable table) {
        CollectionPolicy policy = table.policy(write.namespace()).orElse(null);
        List<BsonValue> promote = new ArrayList<>();
        Reason reason = null;
        for (BsonDocument statement : write.statements()) {
            WriteRoute route = switch (write.kind()) {
                case INSERT -> WriteRouter.insert(statement, policy, table.coverage(write.namespace()));
                case UPDATE -> WriteRouter.update(statement, policy, table.coverage(write.namespace()));
                case DELETE -> WriteRouter.delete(statement, policy, table.coverage(write.namespace()));
                case FIND_AND_MODIFY -> WriteRouter.findAndModify(statement, policy, table.coverage(write.namespace()));
            };
            if (route instanceof WriteRoute.FastTier) {
                reason = reason == null ? route.reason() : reason;
            } else if (route instanceof WriteRoute.PointWrite point) {
                promote.add(point.id());
                reason = point.reason();
            } else if (route instanceof WriteRoute.Archive) {
                return new TransactionRoute.Run(TransactionTier.ARCHIVE, route.reason());
            } else {
                // Resolving through the archive or writing both tiers cannot be one fast-tier transaction.
                return notProvablyHot(write.commandName(), write.namespace(), route.reason(), table);
            }
        }
        if (reason == null) {
            return new TransactionRoute.Run(TransactionTier.FAST, Reason.PROVABLY_HOT_WRITE);
        }
        return promote.isEmpty() ? new TransactionRoute.Run(TransactionTier.FAST, reason) : new TransactionRoute.PromoteThenRun(promote, reason);
    }

    private static TransactionRoute notProvablyHot(String command, String namespace, Reason why, RoutingTable table) {
        String ageField = table.policy(namespace).map(CollectionPolicy::ageField).orElse("the age field");
        return new TransactionRoute.Refused(Reason.TRANSACTION_STATEMENT_NOT_PROVABLY_HOT,
                "Thermocline runs transactions on the fast tier only, and this " + command + " on " + namespace
                        + " is not provably hot (" + why.label() + "; the fast tier " + table.coverage(namespace) + "). "
                        + "Filter on " + ageField + " >= an instant the fast tier covers, address one document by _id, "
                        + "or run this statement outside the transaction");
    }

    private static String label(TransactionTier tier) {
        return tier == TransactionTier.FAST ? "fast tier" : "archive";
    }
}
