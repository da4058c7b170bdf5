package io.thermocline.operator.mode;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bson.Document;

/**
 * The sums over the {@code thermocline.shadow} documents (one per proxy instance and namespace, MODES.md):
 * reads seen in shadow mode, how many of them the fast tier could have answered, comparisons and divergences,
 * and the newest divergence with its namespace. Divergent samples stay in the fast tier: status shows counts only.
 */
public record ShadowEvidence(long reads, long wouldServe, long compared, long diverged, Instant lastDivergenceAt,
                             String lastDivergenceNamespace) {

    public static final ShadowEvidence NONE = new ShadowEvidence(0, 0, 0, 0, null, null);

    public static ShadowEvidence sum(List<Document> documents) {
        long reads = 0;
        long wouldServe = 0;
        long compared = 0;
        long diverged = 0;
        Instant last = null;
        String lastNamespace = null;
        for (Document d : documents) {
            reads += count(d, "reads");
            wouldServe += count(d, "wouldServe");
            compared += count(d, "compared");
            diverged += count(d, "diverged");
            if (d.get("lastDivergenceAt") instanceof Date at && (last == null || at.toInstant().isAfter(last))) {
                last = at.toInstant();
                lastNamespace = d.getString("namespace");
            }
        }
        return new ShadowEvidence(reads, wouldServe, compared, diverged, last, lastNamespace);
    }

    public boolean empty() {
        return reads == 0 && compared == 0;
    }

    /** The share of reads the fast tier would have served, in percent with one decimal; null before any read. */
    public String wouldServePercent() {
        return reads == 0 ? null : String.format(java.util.Locale.ROOT, "%.1f", 100.0 * wouldServe / reads);
    }

    private static long count(Document d, String field) {
        return d.get(field) instanceof Number n ? n.longValue() : 0;
    }
}
