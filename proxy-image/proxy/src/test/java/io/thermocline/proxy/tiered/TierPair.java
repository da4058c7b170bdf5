package io.thermocline.proxy.tiered;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import io.thermocline.embedded.EmbeddedReplicaSet;
import io.thermocline.tiering.metadata.MetadataStore;
import java.time.Duration;
import java.util.List;

/**
 * The fast tier and the archive a tiered test runs on. By default two embedded replica sets started
 * here; {@code -Dthermocline.tiers=external -Dthermocline.fastUri=... -Dthermocline.archiveUri=...}
 * runs the same test on real replica sets (their test databases are dropped first), and the
 * Docker-gated e2e twins pass the URIs of {@code mongo} containers through {@link #external}.
 */
public final class TierPair implements AutoCloseable {

    /** The databases a tiered test writes, dropped from external tiers before it starts. */
    private static final List<String> TEST_DATABASES = List.of("shop", MetadataStore.DATABASE);

    private final String fastUri;
    private final String archiveUri;
    private final List<AutoCloseable> owned;

    private TierPair(String fastUri, String archiveUri, List<AutoCloseable> owned) {
        this.fastUri = fastUri;
        this.archiveUri = archiveUri;
        this.owned = owned;
    }

    /** What the system properties select: embedded (the default) or external. */
    public static TierPair open() {
        String kind = System.getProperty("thermocline.tiers", "embedded");
        return switch (kind) {
            case "embedded" -> embedded();
            case "external" -> external(required("thermocline.fastUri"), required("thermocline.archiveUri"));
            default -> throw new IllegalArgumentException("-Dthermocline.tiers=" + kind + ": use embedded or external");
        };
    }

    public static TierPair embedded() {
        // a worker killed inside a transaction leaves it to the server's lifetime limit: keep it short
        EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder()
                .name("fast")
                .transactionLifetime(Duration.ofSeconds(3))
                .build()
                .start();
        EmbeddedReplicaSet archive =
                EmbeddedReplicaSet.builder().name("archive").build().start();
        return new TierPair(fast.connectionString(), archive.connectionString(), List.of(fast, archive));
    }

    /** As {@link #embedded()}, with an archive of {@code archiveMembers} members (secondary-reads runs lag and pause them). */
    public static TierPair embedded(int archiveMembers) {
        EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder()
                .name("fast")
                .transactionLifetime(Duration.ofSeconds(3))
                .build()
                .start();
        EmbeddedReplicaSet archive = EmbeddedReplicaSet.builder()
                .name("archive")
                .members(archiveMembers)
                .build()
                .start();
        return new TierPair(fast.connectionString(), archive.connectionString(), List.of(fast, archive));
    }

    /**
     * As {@link #embedded()}, with a fast tier whose oplog keeps only {@code entries} entries: a feeder (or any change
     * stream) that falls that far behind loses its history (286) and must resync.
     */
    public static TierPair embeddedWithFastOplogOf(int entries) {
        EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder()
                .name("fast")
                .oplogSize(entries)
                .transactionLifetime(Duration.ofSeconds(3))
                .build()
                .start();
        EmbeddedReplicaSet archive =
                EmbeddedReplicaSet.builder().name("archive").build().start();
        return new TierPair(fast.connectionString(), archive.connectionString(), List.of(fast, archive));
    }

    /** As {@link #embedded()}, with a fast tier of {@code fastMembers} members (failover runs step its primary down). */
    public static TierPair embeddedFast(int fastMembers) {
        EmbeddedReplicaSet fast = EmbeddedReplicaSet.builder()
                .name("fast")
                .members(fastMembers)
                .transactionLifetime(Duration.ofSeconds(3))
                .build()
                .start();
        EmbeddedReplicaSet archive =
                EmbeddedReplicaSet.builder().name("archive").build().start();
        return new TierPair(fast.connectionString(), archive.connectionString(), List.of(fast, archive));
    }

    /** The embedded fast tier, when this pair started one. */
    public java.util.Optional<EmbeddedReplicaSet> embeddedFast() {
        return owned.size() == 2 && owned.get(0) instanceof EmbeddedReplicaSet fast
                ? java.util.Optional.of(fast)
                : java.util.Optional.empty();
    }

    /** The embedded archive, when this pair started one. */
    public java.util.Optional<EmbeddedReplicaSet> embeddedArchive() {
        return owned.size() == 2 && owned.get(1) instanceof EmbeddedReplicaSet archive
                ? java.util.Optional.of(archive)
                : java.util.Optional.empty();
    }

    /** Real replica sets: the test databases are dropped so every run starts empty. */
    public static TierPair external(String fastUri, String archiveUri) {
        for (String uri : List.of(fastUri, archiveUri)) {
            try (MongoClient client = MongoClients.create(uri)) {
                TEST_DATABASES.forEach(db -> client.getDatabase(db).drop());
            }
        }
        return new TierPair(fastUri, archiveUri, List.of());
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(
                    "-Dthermocline.tiers=external needs -D" + property + "=mongodb://... (a replica set)");
        }
        return value;
    }

    public String fastUri() {
        return fastUri;
    }

    public String archiveUri() {
        return archiveUri;
    }

    @Override
    public void close() {
        for (AutoCloseable closeable : owned) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // closing the rest regardless
            }
        }
    }
}
