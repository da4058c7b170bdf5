package io.thermocline.proxy.routing;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.tiering.state.CoverageBound;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Routes an aggregate pipeline on every namespace it touches: its source, the namespaces it reads
 * ({@code $lookup}, {@code $graphLookup}, {@code $unionWith}, also inside {@code $facet} and
 * sub-pipelines) and the one it writes ({@code $out}, {@code $merge}). The fast tier only when every
 * tiered namespace read is provably hot and none read lives only in the archive.
 */
public final class PipelineRouter {

    /** Statistics of the user's collection: the archive holds all of it, so its numbers are the true ones. */
    private static final Set<String> STATISTICS_STAGES =
            Set.of("$collStats", "$indexStats", "$planCacheStats", "$listSearchIndexes");

    /** Server-wide diagnostics: answered by the archive, the cluster the application thinks it talks to. */
    private static final Set<String> ADMIN_STAGES = Set.of(
            "$currentOp",
            "$listLocalSessions",
            "$listSessions",
            "$shardedDataDistribution",
            "$listSampledQueries",
            "$querySettings",
            "$listCatalog",
            "$listClusterCatalog");

    private PipelineRouter() {}

    private enum Use {
        READ,
        OUTPUT
    }

    private record Touched(String namespace, Use use, Optional<Instant> proof) {}

    /**
     * @param database   the command's {@code $db}
     * @param collection the aggregate's collection, null for {@code aggregate: 1}
     * @param pipeline   the stages, as sent
     */
    public static ReadRoute route(String database, String collection, BsonArray pipeline, RoutingTable table) {
        List<BsonDocument> stages = new ArrayList<>();
        for (BsonValue stage : pipeline == null ? new BsonArray() : pipeline) {
            if (!stage.isDocument() || stage.asDocument().size() != 1) {
                // The archive answers a malformed pipeline with the server's own error.
                return new ReadRoute.Archive(Reason.MALFORMED_COMMAND);
            }
            stages.add(stage.asDocument());
        }
        String first = stages.isEmpty() ? "" : stages.get(0).getFirstKey();
        BsonValue changeStream = ChangeStreamStage.options(pipeline);
        if (changeStream != null) {
            return changeStream(database, collection, changeStream, table);
        }
        if (STATISTICS_STAGES.contains(first)) {
            return new ReadRoute.Archive(Reason.STATISTICS_OF_ARCHIVE);
        }
        if (ADMIN_STAGES.contains(first)) {
            return new ReadRoute.Archive(Reason.ADMIN_ON_ARCHIVE);
        }

        List<Touched> touched = new ArrayList<>();
        String source = collection == null ? null : database + "." + collection;
        if (source != null) {
            touched.add(new Touched(
                    source,
                    Use.READ,
                    leadingMatchProof(stages, table.policy(source).orElse(null))));
        }
        walk(database, stages, table, touched);
        return decide(source, touched, table);
    }

    private static ReadRoute decide(String source, List<Touched> touched, RoutingTable table) {
        for (Touched t : touched) {
            if (t.use() == Use.OUTPUT && table.tiered(t.namespace())) {
                return new ReadRoute.Refused(
                        Reason.OUTPUT_TO_TIERED_NAMESPACE,
                        "this pipeline writes into tiered namespace " + t.namespace()
                                + " with $out or $merge, which Thermocline "
                                + "cannot apply to both tiers as one write; write the output to an untiered collection, "
                                + "then insert or update from it through the proxy");
            }
        }
        if (touched.stream().anyMatch(t -> t.use() == Use.OUTPUT)) {
            return new ReadRoute.Archive(Reason.OUTPUT_TO_UNTIERED_NAMESPACE);
        }
        if (source != null && !table.tiered(source)) {
            // the archive answers either way, but a tiered collection it reads needs the read barrier first
            return touched.stream().anyMatch(t -> table.tiered(t.namespace()))
                    ? new ReadRoute.Archive(Reason.FOREIGN_NAMESPACE_TIERED)
                    : new ReadRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        for (Touched t : touched) {
            if (!table.tiered(t.namespace())) {
                return new ReadRoute.Archive(Reason.FOREIGN_NAMESPACE_UNTIERED);
            }
        }
        List<Touched> foreign = source == null ? touched : touched.subList(1, touched.size());
        if (source != null) {
            ReadRoute sourceRoute = notCoveredReason(touched.get(0), table.coverage(source));
            if (sourceRoute != null) {
                return sourceRoute;
            }
        }
        for (Touched t : foreign) {
            if (t.proof().isEmpty()
                    || !table.coverage(t.namespace()).covers(t.proof().get())) {
                return new ReadRoute.Archive(Reason.FOREIGN_NAMESPACE_NOT_PROVABLY_HOT);
            }
        }
        return touched.isEmpty()
                ? new ReadRoute.Archive(Reason.NO_SOURCE_NAMESPACE)
                : new ReadRoute.FastTier(Reason.AGE_BOUND_COVERED);
    }

    private static ReadRoute notCoveredReason(Touched source, CoverageBound bound) {
        if (source.proof().isEmpty()) {
            return new ReadRoute.Archive(Reason.NO_AGE_BOUND);
        }
        if (!bound.covers(source.proof().get())) {
            return new ReadRoute.Archive(
                    bound instanceof CoverageBound.Nothing ? Reason.NOTHING_COVERED : Reason.AGE_BOUND_BELOW_COVERAGE);
        }
        return null;
    }

    private static ReadRoute changeStream(String database, String collection, BsonValue options, RoutingTable table) {
        if (collection != null) {
            return table.tiered(database + "." + collection)
                    ? new ReadRoute.FastTier(Reason.CHANGE_STREAM_ON_FAST_TIER)
                    : new ReadRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        boolean wholeCluster = options != null
                && options.isDocument()
                && options.asDocument()
                        .getBoolean("allChangesForCluster", BsonBoolean.FALSE)
                        .getValue();
        String scope = wholeCluster ? null : database;
        if (!table.hasTieredCollectionIn(scope)) {
            return new ReadRoute.Archive(Reason.UNTIERED_NAMESPACE);
        }
        return new ReadRoute.Refused(
                Reason.CHANGE_STREAM_SPANS_TIERS,
                "a change stream on " + (wholeCluster ? "the whole cluster" : "database " + database)
                        + " would need events from "
                        + "both tiers because it includes tiered collections; watch each tiered collection on its own "
                        + "through the proxy, and the other collections separately");
    }

    /** Consecutive {@code $match} stages at the head of a pipeline filter its input: their proofs combine. */
    static Optional<Instant> leadingMatchProof(List<BsonDocument> stages, CollectionPolicy policy) {
        if (policy == null) {
            return Optional.empty();
        }
        Instant best = null;
        for (BsonDocument stage : stages) {
            BsonValue match = stage.get("$match");
            if (match == null || !match.isDocument()) {
                break;
            }
            Instant bound = AgeProof.lowerBound(match.asDocument(), policy).orElse(null);
            if (bound != null && (best == null || bound.isAfter(best))) {
                best = bound;
            }
        }
        return Optional.ofNullable(best);
    }

    private static void walk(String database, List<BsonDocument> stages, RoutingTable table, List<Touched> touched) {
        for (BsonDocument stage : stages) {
            String name = stage.getFirstKey();
            BsonValue spec = stage.get(name);
            switch (name) {
                case "$lookup" -> lookup(database, spec, table, touched);
                case "$graphLookup" -> graphLookup(database, spec, table, touched);
                case "$unionWith" -> unionWith(database, spec, table, touched);
                case "$facet" -> {
                    if (spec.isDocument()) {
                        for (BsonValue branch : spec.asDocument().values()) {
                            walk(database, documents(branch), table, touched);
                        }
                    }
                }
                case "$out" -> output(namespaceOf(database, spec, "coll"), touched);
                case "$merge" ->
                    output(
                            namespaceOf(
                                    database,
                                    spec.isDocument() ? spec.asDocument().get("into") : spec,
                                    "coll"),
                            touched);
                default -> {
                    // Other stages transform the documents they are given and touch no namespace.
                }
            }
        }
    }

    private static void lookup(String database, BsonValue spec, RoutingTable table, List<Touched> touched) {
        if (!spec.isDocument()) {
            return;
        }
        BsonDocument lookup = spec.asDocument();
        List<BsonDocument> sub = documents(lookup.get("pipeline"));
        String foreign = namespaceOf(database, lookup.get("from"), "coll");
        if (foreign != null) {
            // localField/foreignField joins documents of any age; only a leading $match of the sub-pipeline proves.
            touched.add(new Touched(
                    foreign,
                    Use.READ,
                    leadingMatchProof(sub, table.policy(foreign).orElse(null))));
        }
        walk(database, sub, table, touched);
    }

    private static void graphLookup(String database, BsonValue spec, RoutingTable table, List<Touched> touched) {
        if (!spec.isDocument()) {
            return;
        }
        BsonDocument graph = spec.asDocument();
        String foreign = namespaceOf(database, graph.get("from"), "coll");
        if (foreign == null) {
            return;
        }
        // restrictSearchWithMatch filters every document the recursive search visits.
        BsonValue restrict = graph.get("restrictSearchWithMatch");
        Optional<Instant> proof = restrict != null && restrict.isDocument()
                ? table.policy(foreign).flatMap(p -> AgeProof.lowerBound(restrict.asDocument(), p))
                : Optional.empty();
        touched.add(new Touched(foreign, Use.READ, proof));
    }

    private static void unionWith(String database, BsonValue spec, RoutingTable table, List<Touched> touched) {
        BsonValue coll = spec.isDocument() ? spec.asDocument().get("coll") : spec;
        List<BsonDocument> sub = spec.isDocument() ? documents(spec.asDocument().get("pipeline")) : List.of();
        String foreign = namespaceOf(database, coll, "coll");
        if (foreign != null) {
            touched.add(new Touched(
                    foreign,
                    Use.READ,
                    leadingMatchProof(sub, table.policy(foreign).orElse(null))));
        }
        walk(database, sub, table, touched);
    }

    private static void output(String namespace, List<Touched> touched) {
        if (namespace != null) {
            touched.add(new Touched(namespace, Use.OUTPUT, Optional.empty()));
        }
    }

    /** A collection named as {@code "coll"} (same database) or {@code {db: ..., <collKey>: ...}}. */
    private static String namespaceOf(String database, BsonValue value, String collKey) {
        if (value == null) {
            return null;
        }
        if (value.isString()) {
            return database + "." + value.asString().getValue();
        }
        if (value.isDocument()) {
            BsonDocument d = value.asDocument();
            BsonValue db = d.get("db");
            BsonValue coll = d.get(collKey);
            if (coll != null && coll.isString()) {
                return (db != null && db.isString() ? db.asString().getValue() : database) + "."
                        + coll.asString().getValue();
            }
        }
        return null;
    }

    private static List<BsonDocument> documents(BsonValue array) {
        List<BsonDocument> out = new ArrayList<>();
        if (array != null && array.isArray()) {
            for (BsonValue v : array.asArray()) {
                if (v.isDocument() && v.asDocument().size() == 1) {
                    out.add(v.asDocument());
                }
            }
        }
        return out;
    }
}
