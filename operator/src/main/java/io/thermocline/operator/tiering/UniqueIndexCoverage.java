package io.thermocline.operator.tiering;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.bson.Document;

/**
 * Where the proxy cannot hold a tiered collection's unique secondary index across the tiers. It enforces
 * the fast tier's unique indexes (read from the fast tier's {@code listIndexes}) against both tiers, so:
 * an index only the archive has is not enforced by the proxy (a write takes a key the archive holds, and
 * the archive refuses its mirror: a dead letter); an index only the fast tier has is enforced, but each
 * guarded write's look-up in the archive has no index; an index with a collation is compared simply.
 */
public final class UniqueIndexCoverage {

    private UniqueIndexCoverage() {
    }

    /** One sentence per gap ({@code listIndexes} documents of each tier); empty when every unique index holds across tiers. */
    public static List<String> gaps(String namespace, List<Document> fastTier, List<Document> archive) {
        List<Document> fastUnique = unique(fastTier);
        List<Document> archiveUnique = unique(archive);
        List<String> gaps = new ArrayList<>();
        for (Document index : archiveUnique) {
            if (sameKey(fastUnique, index).isEmpty()) {
                gaps.add("unique index " + namespace + ": " + index.getString("name") + " exists only in the archive: the proxy"
                        + " enforces the fast tier's unique indexes across both tiers, not this one, so a write can take a key the"
                        + " archive holds and the feeder then dead-letters its mirror; create the index through the proxy"
                        + " (createIndexes reaches both tiers)");
            }
        }
        for (Document index : fastUnique) {
            Optional<Document> inArchive = sameKey(archiveUnique, index);
            if (inArchive.isEmpty()) {
                gaps.add("unique index " + namespace + ": " + index.getString("name") + " exists only in the fast tier: it is"
                        + " enforced across tiers, but each guarded write looks the key up in the archive without an index;"
                        + " create it there too (through the proxy, createIndexes reaches both tiers)");
            }
            if (index.get("collation") != null || inArchive.map(a -> a.get("collation") != null).orElse(false)) {
                gaps.add("unique index " + namespace + ": " + index.getString("name") + " has a collation: the proxy compares"
                        + " keys across tiers simply, so a duplicate that differs only under the collation is not refused");
            }
        }
        return gaps;
    }

    private static List<Document> unique(List<Document> indexes) {
        return indexes.stream().filter(i -> i.getBoolean("unique", false) && !"_id_".equals(i.getString("name"))).toList();
    }

    /** The unique index over the same fields (order and direction do not change what is unique). */
    private static Optional<Document> sameKey(List<Document> indexes, Document index) {
        Set<String> fields = fields(index);
        return indexes.stream().filter(i -> Objects.equals(fields(i), fields)).findFirst();
    }

    private static Set<String> fields(Document index) {
        Document key = index.get("key", Document.class);
        return key == null ? Set.of() : key.keySet();
    }
}
