package io.thermocline.operator.tiering;

import java.util.List;

/** Where to look: both tiers' connection strings (with credentials) and the tiered namespaces ({@code db.coll}). */
public record TieringTarget(String fastTierUri, String archiveUri, List<String> namespaces) {

    public TieringTarget {
        namespaces = List.copyOf(namespaces);
    }

    @Override
    public String toString() {
        return "TieringTarget[uris=***, namespaces=" + namespaces + "]";
    }
}
