package io.thermocline.proxy.causal;

import io.thermocline.proxy.routing.AgeProof;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Whether a point read by {@code _id} that found nothing in the fast tier may read the archive
 * without waiting at the {@link ReadBarrier} (pure). It may when the fast tier's empty answer, read
 * after the read arrived, shows that the document is absent there (not merely that it does not
 * match, is skipped over or is outside a hinted index) and no fence of any kind names it: then
 * every write to it acknowledged before the read arrived is already in the archive (the proof is in
 * docs/consistency.md, "Point reads that skip the barrier"). Anything not listed here waits.
 */
public final class PointReadSkip {

    /** Fields every command may carry that do not change which documents it returns. */
    private static final Set<String> GENERIC = Set.of("$db", "lsid", "$clusterTime", "$readPreference", "readConcern",
            "comment", "maxTimeMS", "apiVersion", "apiStrict", "apiDeprecationErrors");

    /** find's options that leave "an empty first batch" meaning "no document with this _id" (no skip, hint, min, max, collation). */
    private static final Set<String> FIND = Set.of("find", "filter", "projection", "sort", "limit", "batchSize", "singleBatch",
            "noCursorTimeout", "allowDiskUse", "let", "returnKey", "showRecordId");

    /** count's options with the same property ({@code n: 0} means absent). */
    private static final Set<String> COUNT = Set.of("count", "query", "limit");

    /** Read concern levels that read the primary's present (no snapshot in the past). */
    private static final Set<String> PRESENT_LEVELS = Set.of("local", "majority", "linearizable", "available");

    private PointReadSkip() {
    }

    /**
     * @param commandName the read's command ({@code find}, {@code count}; others always wait)
     * @param command     the read as the client sent it
     * @param fenced      whether a fence (user delete or eviction) names the document, read after the fast tier's answer
     */
    public static boolean allowed(String commandName, BsonDocument command, boolean fenced) {
        if (fenced) {
            return false;
        }
        Set<String> own = switch (commandName) {
            case "find" -> FIND;
            case "count" -> COUNT;
            default -> null; // distinct: an empty answer may be a document without the field
        };
        if (own == null) {
            return false;
        }
        for (String key : command.keySet()) {
            if (!own.contains(key) && !GENERIC.contains(key)) {
                return false;
            }
        }
        BsonValue filter = command.get(commandName.equals("find") ? "filter" : "query");
        if (filter == null || !filter.isDocument() || AgeProof.pureIdEquality(filter.asDocument()).isEmpty()) {
            return false;
        }
        BsonValue batchSize = command.get("batchSize");
        if (batchSize != null && !(batchSize.isNumber() && batchSize.asNumber().longValue() > 0)) {
            return false; // batchSize 0 leaves an empty batch whatever exists
        }
        return readsThePresent(command.get("readConcern"));
    }

    private static boolean readsThePresent(BsonValue readConcern) {
        if (readConcern == null) {
            return true;
        }
        if (!readConcern.isDocument()) {
            return false;
        }
        for (var entry : readConcern.asDocument().entrySet()) {
            switch (entry.getKey()) {
                case "level" -> {
                    if (!entry.getValue().isString() || !PRESENT_LEVELS.contains(entry.getValue().asString().getValue())) {
                        return false; // snapshot reads a past point the fast tier's answer may not show
                    }
                }
                case "afterClusterTime" -> {
                    // the fast tier's answer is at or after it
                }
                default -> {
                    return false; // atClusterTime, afterOpTime, provenance: not proven
                }
            }
        }
        return true;
    }
}
