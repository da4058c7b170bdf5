package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Which tier serves a command and why, in the form {@code explain} returns it (under
 * {@code thermocline} in the explain output). Built from the same routers that route the command.
 *
 * @param namespace      {@code db.coll}, or the database for database-wide commands, null when none
 * @param provenAgeBound the lower bound of the age the filter proves, null when it proves none
 * @param coverage       what the fast tier covers for the namespace, null when untiered
 */
public record RoutingExplanation(
        String command,
        String namespace,
        Served served,
        Reason reason,
        String detail,
        Instant provenAgeBound,
        String coverage) {

    /** Who serves the command; the label is what explain prints. */
    public enum Served {
        FAST_TIER,
        FAST_TIER_THEN_ARCHIVE,
        PROMOTE_THEN_FAST_TIER,
        RESOLVE_THEN_FAST_TIER,
        BOTH_TIERS,
        ARCHIVE,
        PROXY,
        CURSOR_OWNER,
        TRANSACTION_TIER,
        REFUSED;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    public RoutingExplanation {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(served, "served");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
    }

    /** Explains a classified command; an {@code explain} explains the command it wraps. */
    public static RoutingExplanation of(CommandClass command, RoutingTable table) {
        if (command instanceof CommandClass.Explain explain) {
            return of(explain.explained(), table);
        }
        if (command instanceof CommandClass.Read read) {
            CollectionPolicy policy = table.policy(read.namespace()).orElse(null);
            ReadRoute route =
                    ReadRouter.route(read.filter(), policy, table.coverage(read.namespace()), read.collation());
            return fromRead(read.commandName(), read.namespace(), route, proof(read.filter(), policy), table);
        }
        if (command instanceof CommandClass.Aggregate aggregate) {
            String ns = aggregate.collection() == null
                    ? aggregate.database()
                    : aggregate.database() + "." + aggregate.collection();
            ReadRoute route =
                    PipelineRouter.route(aggregate.database(), aggregate.collection(), aggregate.pipeline(), table);
            Optional<Instant> proven = aggregate.collection() == null
                    ? Optional.empty()
                    : PipelineRouter.leadingMatchProof(
                            stages(aggregate), table.policy(ns).orElse(null));
            return fromRead("aggregate", ns, route, proven, table);
        }
        if (command instanceof CommandClass.Write write) {
            return fromWrite(write, table);
        }
        if (command instanceof CommandClass.Ddl ddl) {
            return simple(
                    ddl.commandName(),
                    String.join(",", ddl.namespaces()),
                    Served.BOTH_TIERS,
                    Reason.DDL_ON_TIERED_NAMESPACE);
        }
        if (command instanceof CommandClass.CursorOwned cursor) {
            return simple(cursor.commandName(), cursor.namespace(), Served.CURSOR_OWNER, Reason.CURSOR_OWNER);
        }
        if (command instanceof CommandClass.Session session) {
            return simple(session.commandName(), null, Served.BOTH_TIERS, Reason.SESSION_COMMAND);
        }
        if (command instanceof CommandClass.TransactionEnd end) {
            return simple(end.commandName(), null, Served.TRANSACTION_TIER, Reason.TRANSACTION_PINNED_TIER);
        }
        if (command instanceof CommandClass.Admin admin) {
            return admin.destination() == Destination.PROXY
                    ? simple(admin.commandName(), null, Served.PROXY, Reason.ANSWERED_BY_PROXY)
                    : admin.destination() == Destination.BOTH_TIERS
                            ? simple(admin.commandName(), null, Served.BOTH_TIERS, Reason.ADMIN_OVER_BOTH_TIERS)
                            : simple(admin.commandName(), null, Served.ARCHIVE, Reason.ADMIN_ON_ARCHIVE);
        }
        if (command instanceof CommandClass.Rejected rejected) {
            return new RoutingExplanation(
                    rejected.commandName(), null, Served.REFUSED, rejected.reason(), rejected.message(), null, null);
        }
        CommandClass.PassThrough pass = (CommandClass.PassThrough) command;
        return simple(pass.commandName(), null, Served.ARCHIVE, pass.reason());
    }

    /** The document {@code explain} carries: {@code {tier, reason, namespace, detail, provenAgeBound, coverage}}. */
    public BsonDocument toBsonDocument() {
        BsonDocument d = new BsonDocument("tier", new BsonString(served.label()))
                .append("reason", new BsonString(reason.label()))
                .append("command", new BsonString(command));
        if (namespace != null) {
            d.append("namespace", new BsonString(namespace));
        }
        d.append("detail", new BsonString(detail));
        if (provenAgeBound != null) {
            d.append("provenAgeBound", new BsonDateTime(provenAgeBound.toEpochMilli()));
        }
        if (coverage != null) {
            d.append("coverage", new BsonString(coverage));
        }
        return d;
    }

    private static RoutingExplanation fromRead(
            String command, String ns, ReadRoute route, Optional<Instant> proven, RoutingTable table) {
        Served served;
        if (route instanceof ReadRoute.FastTier) {
            served = Served.FAST_TIER;
        } else if (route instanceof ReadRoute.PointReadFastFirst) {
            served = Served.FAST_TIER_THEN_ARCHIVE;
        } else if (route instanceof ReadRoute.Refused) {
            served = Served.REFUSED;
        } else {
            served = Served.ARCHIVE;
        }
        String detail = route instanceof ReadRoute.Refused refused ? refused.message() : sentence(route.reason());
        String coverage = table.tiered(ns) ? "fast tier " + table.coverage(ns) : null;
        return new RoutingExplanation(command, ns, served, route.reason(), detail, proven.orElse(null), coverage);
    }

    private static RoutingExplanation fromWrite(CommandClass.Write write, RoutingTable table) {
        // explain accepts one update or delete statement; for several, the first is explained.
        CollectionPolicy policy = table.policy(write.namespace()).orElse(null);
        BsonDocument statement = write.statements().isEmpty()
                ? new BsonDocument()
                : write.statements().get(0);
        WriteRoute route = switch (write.kind()) {
            case INSERT -> WriteRouter.insert(statement, policy, table.coverage(write.namespace()));
            case UPDATE -> WriteRouter.update(statement, policy, table.coverage(write.namespace()));
            case DELETE -> WriteRouter.delete(statement, policy, table.coverage(write.namespace()));
            case FIND_AND_MODIFY -> WriteRouter.findAndModify(statement, policy, table.coverage(write.namespace()));
        };
        Served served;
        if (route instanceof WriteRoute.FastTier) {
            served = Served.FAST_TIER;
        } else if (route instanceof WriteRoute.PointWrite) {
            served = Served.PROMOTE_THEN_FAST_TIER;
        } else if (route instanceof WriteRoute.ResolveOneThenPointWrite) {
            served = Served.RESOLVE_THEN_FAST_TIER;
        } else if (route instanceof WriteRoute.BothTiers) {
            served = Served.BOTH_TIERS;
        } else {
            served = Served.ARCHIVE;
        }
        BsonDocument filter = switch (write.kind()) {
            case INSERT -> null;
            case FIND_AND_MODIFY -> statement.isDocument("query") ? statement.getDocument("query") : null;
            default -> statement.isDocument("q") ? statement.getDocument("q") : null;
        };
        return new RoutingExplanation(
                write.commandName(),
                write.namespace(),
                served,
                route.reason(),
                sentence(route.reason()) + whySlow(route.reason(), policy),
                proof(filter, policy).orElse(null),
                "fast tier " + table.coverage(write.namespace()));
    }

    /**
     * Why a write the filter does not prove recent costs more than one on the fast tier, and the fix: people
     * see seconds for a bulk update where a replica set takes milliseconds (docs/routing.md, "Writes").
     */
    static String whySlow(Reason reason, CollectionPolicy policy) {
        if (policy == null
                || (reason != Reason.SINGLE_WRITE_NOT_PROVABLY_HOT && reason != Reason.MULTI_WRITE_NOT_PROVABLY_HOT)) {
            return "";
        }
        String work = reason == Reason.MULTI_WRITE_NOT_PROVABLY_HOT
                ? "every document the filter matches in the archive is found there and written in both tiers under a guard against the feeder"
                : "the target is looked up in the archive and copied into the fast tier before it is written";
        return ". This is slower than on the replica set alone: the proxy first waits until the feeder has mirrored the fast"
                + " tier's writes (the sync barrier), then " + work
                + ", a few round trips per document. To keep it on the fast"
                + " tier, bound " + policy.ageField() + " from below in the filter (e.g. {" + policy.ageField()
                + ": {$gte: <a date inside the window>}})";
    }

    private static Optional<Instant> proof(BsonDocument filter, CollectionPolicy policy) {
        return policy == null ? Optional.empty() : AgeProof.lowerBound(filter, policy);
    }

    private static List<BsonDocument> stages(CommandClass.Aggregate aggregate) {
        return aggregate.pipeline().getValues().stream()
                .filter(BsonValue::isDocument)
                .map(BsonValue::asDocument)
                .toList();
    }

    private static RoutingExplanation simple(String command, String ns, Served served, Reason reason) {
        return new RoutingExplanation(command, ns, served, reason, sentence(reason), null, null);
    }

    /** One sentence per reason, for people reading explain output. */
    static String sentence(Reason reason) {
        return switch (reason) {
            case AGE_BOUND_COVERED ->
                "the filter proves every matching document is at least as young as what the fast tier holds in full";
            case AGE_BOUND_BELOW_COVERAGE -> "the filter reaches older documents than the fast tier holds in full";
            case NOTHING_COVERED -> "the fast tier does not yet hold any complete age range for this collection";
            case NO_AGE_BOUND ->
                "the filter does not bound the age field from below with a Date, epoch number or ObjectId";
            case POINT_READ_BY_ID ->
                "a read by _id: the fast tier answers when it holds the document, else the archive";
            case UNTIERED_NAMESPACE -> "no tiering policy: the archive serves it unchanged";
            case COVERAGE_CHANGED_DURING_READ ->
                "the coverage bound the fast tier's answer relied on changed or went stale while it was read";
            case FOREIGN_NAMESPACE_TIERED ->
                "the pipeline reads a tiered collection from one that lives only in the archive: the archive answers after the read barrier";
            case FOREIGN_NAMESPACE_UNTIERED -> "the pipeline reads a collection that lives only in the archive";
            case FOREIGN_NAMESPACE_NOT_PROVABLY_HOT ->
                "the pipeline reads a tiered collection without proving those documents are hot";
            case OUTPUT_TO_UNTIERED_NAMESPACE -> "the pipeline writes into a collection that lives in the archive";
            case OUTPUT_TO_TIERED_NAMESPACE -> "writing a pipeline's output into a tiered collection is not supported";
            case CHANGE_STREAM_ON_FAST_TIER ->
                "change streams on tiered collections come from the fast tier, without Thermocline's own writes";
            case CHANGE_STREAM_SPANS_TIERS -> "a database or cluster change stream would need events from both tiers";
            case STATISTICS_OF_ARCHIVE -> "statistics describe the whole collection, which the archive holds";
            case NO_SOURCE_NAMESPACE -> "the pipeline reads no collection";
            case INSERT_SERVER_ASSIGNS_ID -> "an insert without _id cannot collide with an archived document";
            case INSERT_ID_PROVABLY_HOT -> "the _id is young enough that the fast tier would hold any document with it";
            case INSERT_ID_MAY_BE_ARCHIVED ->
                "the archive may hold this _id: it is promoted first so a duplicate is refused";
            case POINT_WRITE_BY_ID ->
                "a write on one _id: promoted from the archive when only the archive holds it, then written in the fast tier";
            case UPSERT_WITH_EXPLICIT_ID ->
                "an upsert naming its _id: promoted first so it cannot duplicate an archived document";
            case PROVABLY_HOT_WRITE -> "every document the write can match is held by the fast tier";
            case SINGLE_WRITE_NOT_PROVABLY_HOT ->
                "its target is found in the archive after the sync barrier, promoted, then written in the fast tier";
            case MULTI_WRITE_NOT_PROVABLY_HOT -> "applied to both tiers after the sync barrier, with counts over both";
            case DDL_ON_TIERED_NAMESPACE -> "DDL on a tiered collection applies to both tiers";
            case RENAME_OF_TIERED_NAMESPACE -> "renaming a tiered collection is refused";
            case CURSOR_OWNER -> "served by the tier, member and proxy replica that own the cursor";
            case SESSION_COMMAND -> "sessions may exist on both tiers";
            case ANSWERED_BY_PROXY -> "the proxy answers it itself";
            case ADMIN_ON_ARCHIVE -> "answered by the archive, the cluster the application connects to";
            case ADMIN_OVER_BOTH_TIERS ->
                "sent to both tiers and merged, as mongos does over shards: currentOp lists both tiers' operations"
                        + " (opids prefixed fast: or archive:), killOp goes to the tier its opid names, serverStatus and replSetGetStatus"
                        + " add a section per tier";
            case UNKNOWN_COMMAND -> "not a command Thermocline routes: the archive serves it unchanged";
            case MALFORMED_COMMAND -> "malformed: the archive answers with the server's own error";
            case TRANSACTION_STATEMENT_NOT_PROVABLY_HOT ->
                "transactions run on the fast tier only, and this statement is not provably hot";
            case TRANSACTION_SPANS_TIERS -> "a transaction cannot span the fast tier and the archive";
            case TRANSACTION_PINNED_TIER -> "runs on the tier the transaction is pinned to";
        };
    }
}
