package io.thermocline.operator.credentials;

import io.thermocline.operator.api.v1alpha1.CollectionSpec;
import io.thermocline.operator.layout.ClusterLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The data-plane parts, each with its own fast-tier user and the least roles its code needs there
 * (docs/security.md). Every part keeps its state in the {@code thermocline} database (checkpoints,
 * coverage, fences, provenance, the mode document), so each gets {@code readWrite} on it; beyond that:
 * <ul>
 * <li>proxy: serves applications' reads, writes and DDL on tiered collections, and forwards what it
 *     cannot tell apart from them: {@code readWriteAnyDatabase}, {@code clusterMonitor} (server status for
 *     the fleet's health);</li>
 * <li>feeder: opens one cluster-wide change stream and, on a resync, scans every tiered collection; it
 *     writes nothing outside {@code thermocline}: {@code readAnyDatabase} (a cluster-wide change stream
 *     needs {@code find} and {@code changeStream} on every non-system collection);</li>
 * <li>evictor: finds old documents, removes them, re-inserts one a user changed meanwhile: its own role,
 *     {@code find, insert, remove} on the tiered collections only;</li>
 * <li>warmer: reads what the fast tier holds and inserts warm copies (a first copy creates the
 *     collection): its own role, {@code find, insert, createCollection} on the tiered collections only.</li>
 * </ul>
 */
public enum DataPlanePart {
    PROXY("proxy", List.of("readWriteAnyDatabase@admin", "clusterMonitor@admin"), List.of()),
    FEEDER("feeder", List.of("readAnyDatabase@admin"), List.of()),
    EVICTOR("evictor", List.of(), List.of("find", "insert", "remove")),
    WARMER("warmer", List.of(), List.of("find", "insert", "createCollection"));

    /** Every part's own state. */
    static final String METADATA_ROLE = "readWrite@thermocline";

    public static final String USERNAME = "username";
    public static final String PASSWORD = "password";

    private final String role;
    private final List<String> builtIn;
    private final List<String> actions;

    DataPlanePart(String role, List<String> builtIn, List<String> actions) {
        this.role = role;
        this.builtIn = builtIn;
        this.actions = actions;
    }

    /** The container name and {@code thermocline <role>} command of this part. */
    public String role() {
        return role;
    }

    /** Its fast-tier user name. */
    public String user() {
        return "thermocline-" + role;
    }

    /** The Secret with its user and password, mounted into this part's pods only. */
    public String secret(ClusterLayout layout) {
        return layout.cluster() + "-" + role + "-fast-user";
    }

    public static DataPlanePart of(String role) {
        for (DataPlanePart part : values()) {
            if (part.role.equals(role)) {
                return part;
            }
        }
        throw new IllegalArgumentException("no data-plane part " + role);
    }

    /** What the operator keeps on the fast tier for this part ({@code password} null: its Secret does not exist yet). */
    public FastTierUser fastTierUser(ClusterLayout layout, List<CollectionSpec> collections, String password) {
        List<String> roles = new ArrayList<>(builtIn);
        roles.add(METADATA_ROLE);
        List<String> namespaces = actions.isEmpty()
                ? List.of()
                : collections.stream()
                        .map(c -> c.database + "." + c.collection)
                        .sorted()
                        .toList();
        return new FastTierUser(user(), password, secret(layout), roles, actions, namespaces);
    }
}
