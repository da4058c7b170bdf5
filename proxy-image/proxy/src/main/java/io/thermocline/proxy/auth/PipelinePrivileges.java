package io.thermocline.proxy.auth;

import io.thermocline.proxy.auth.CommandPrivileges.Need;
import io.thermocline.proxy.routing.ChangeStreamStage;
import io.thermocline.security.roles.Target;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What an aggregation needs, as mongod checks it: its first stage decides what it needs on its input (a change
 * stream, statistics, the cluster's operations and sessions), and every collection a stage names ({@code $lookup},
 * {@code $graphLookup}, {@code $unionWith}, {@code $facet}, {@code $out}, {@code $merge}, at any depth) needs its
 * action too. Apart from {@link CommandPrivileges}, which also checks a view's pipeline with it.
 */
final class PipelinePrivileges {

    private PipelinePrivileges() {}

    static void aggregate(String db, BsonValue source, BsonValue pipeline, List<Need> needs) {
        boolean onCollection = source != null && source.isString();
        Target input =
                onCollection ? new Target.Collection(db, source.asString().getValue()) : new Target.Database(db);
        String firstStage = firstStage(pipeline);
        switch (firstStage) {
            case "$changeStream" -> {
                // as mongod: a collection's stream needs find + changeStream on it, a database's on the database,
                // the cluster's ({allChangesForCluster: true}, on admin) on every database's normal collections
                Target watched =
                        onCollection ? input : allChangesForCluster(pipeline) ? new Target.AnyDatabase() : input;
                needs.add(new Need(watched, "changeStream"));
                needs.add(new Need(watched, "find"));
            }
            case "$collStats" -> needs.add(new Need(input, "collStats"));
            case "$indexStats" -> needs.add(new Need(input, "indexStats"));
            case "$currentOp", "$listSessions" ->
                needs.add(new Need(new Target.Cluster(), firstStage.equals("$currentOp") ? "inprog" : "listSessions"));
            case "$planCacheStats" -> needs.add(new Need(input, "planCacheRead"));
            // the backend sees one user, the proxy's, so it cannot list only the caller's own sessions: listing any
            // needs
            // what mongod requires for listing every user's ({allUsers: true})
            case "$listLocalSessions" -> needs.add(new Need(new Target.Cluster(), "listSessions"));
            case "$documents" -> {}
            default -> {
                if (onCollection) {
                    needs.add(new Need(input, "find"));
                } else if (!firstStage.isEmpty() && !firstStage.equals("$documents")) {
                    needs.add(new Need(new Target.Cluster(), CommandPrivileges.UNKNOWN_ACTION));
                }
            }
        }
        pipeline(db, pipeline, needs);
    }

    /** The collections the stages name, at any depth. */
    static void pipeline(String db, BsonValue pipeline, List<Need> needs) {
        if (!(pipeline instanceof BsonArray stages)) {
            return;
        }
        for (BsonValue s : stages) {
            if (!(s instanceof BsonDocument stage) || stage.isEmpty()) {
                continue;
            }
            String op = stage.getFirstKey();
            BsonValue spec = stage.get(op);
            switch (op) {
                case "$lookup", "$graphLookup" -> {
                    if (spec instanceof BsonDocument d) {
                        BsonValue from = d.get("from");
                        if (from != null) {
                            needs.add(new Need(fromTarget(db, from), "find"));
                        }
                        pipeline(
                                from instanceof BsonDocument f && f.isString("db")
                                        ? f.getString("db").getValue()
                                        : db,
                                d.get("pipeline"),
                                needs);
                    }
                }
                case "$unionWith" -> {
                    if (spec != null && spec.isString()) {
                        needs.add(new Need(
                                new Target.Collection(db, spec.asString().getValue()), "find"));
                    } else if (spec instanceof BsonDocument d) {
                        if (d.isString("coll")) {
                            needs.add(new Need(
                                    new Target.Collection(
                                            db, d.getString("coll").getValue()),
                                    "find"));
                        }
                        pipeline(db, d.get("pipeline"), needs);
                    }
                }
                case "$facet" -> {
                    if (spec instanceof BsonDocument d) {
                        d.values().forEach(sub -> pipeline(db, sub, needs));
                    }
                }
                case "$out" -> {
                    Target t = outTarget(db, spec, "coll");
                    needs.add(new Need(t, "insert"));
                    needs.add(new Need(t, "remove"));
                }
                case "$merge" -> {
                    Target t = spec instanceof BsonDocument d
                            ? outTarget(db, d.get("into"), "coll")
                            : outTarget(db, spec, "coll");
                    needs.add(new Need(t, "insert"));
                    needs.add(new Need(t, "update"));
                }
                default -> {}
            }
        }
    }

    private static Target fromTarget(String db, BsonValue from) {
        if (from instanceof BsonDocument d && d.isString("coll")) {
            return new Target.Collection(
                    d.isString("db") ? d.getString("db").getValue() : db,
                    d.getString("coll").getValue());
        }
        return from.isString() ? new Target.Collection(db, from.asString().getValue()) : new Target.Cluster();
    }

    private static Target outTarget(String db, BsonValue spec, String collField) {
        if (spec != null && spec.isString()) {
            return new Target.Collection(db, spec.asString().getValue());
        }
        if (spec instanceof BsonDocument d && d.isString(collField)) {
            return new Target.Collection(
                    d.isString("db") ? d.getString("db").getValue() : db,
                    d.getString(collField).getValue());
        }
        return new Target.Cluster();
    }

    private static boolean allChangesForCluster(BsonValue pipeline) {
        BsonValue spec = ChangeStreamStage.options(pipeline);
        return spec instanceof BsonDocument d && MongoBooleans.isTrue(d.get("allChangesForCluster"));
    }

    private static String firstStage(BsonValue pipeline) {
        if (pipeline instanceof BsonArray a && !a.isEmpty() && a.get(0) instanceof BsonDocument d && !d.isEmpty()) {
            return d.getFirstKey();
        }
        return "";
    }
}
