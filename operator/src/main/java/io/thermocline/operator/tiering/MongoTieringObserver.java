package io.thermocline.operator.tiering;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.bson.BsonTimestamp;
import org.bson.Document;

/**
 * Reads the feeder's checkpoint from the fast tier's metadata ({@value #METADATA_DB}.{@value #CHECKPOINTS},
 * document {@code _id: "feeder"}, field {@code mirroredThrough}: the cluster time up to which the
 * archive holds every write) and compares it with the fast tier's last write.
 */
@ApplicationScoped
public class MongoTieringObserver implements TieringObserver {

    static final String METADATA_DB = "thermocline";
    static final String CHECKPOINTS = "checkpoints";
    private static final int TIMEOUT_SECONDS = 5;

    @Override
    public Optional<TieringSnapshot> observe(TieringTarget target) {
        try (MongoClient fast = client(target.fastTierUri()); MongoClient archive = client(target.archiveUri())) {
            Document hello = fast.getDatabase("admin").runCommand(new Document("hello", 1));
            Document lastWrite = hello.get("lastWrite", Document.class);
            Document checkpoint = fast.getDatabase(METADATA_DB).getCollection(CHECKPOINTS)
                    .find(new Document("_id", "feeder")).first();
            Long lag = null;
            boolean drained = false;
            if (lastWrite != null && checkpoint != null && checkpoint.get("mirroredThrough") instanceof BsonTimestamp mirrored) {
                Date written = lastWrite.getDate("lastWriteDate");
                long lastSeconds = written == null ? mirrored.getTime() : written.getTime() / 1000;
                lag = Math.max(0, lastSeconds - mirrored.getTime());
                BsonTimestamp lastOp = lastWrite.get("opTime", Document.class) == null ? null
                        : lastWrite.get("opTime", Document.class).get("ts", BsonTimestamp.class);
                drained = lastOp != null && mirrored.compareTo(lastOp) >= 0;
            }
            long fastCount = 0;
            long archiveCount = 0;
            List<String> uniqueIndexes = new ArrayList<>();
            for (String ns : target.namespaces()) {
                String[] parts = ns.split("\\.", 2);
                fastCount += fast.getDatabase(parts[0]).getCollection(parts[1]).estimatedDocumentCount();
                var archived = archive.getDatabase(parts[0]).getCollection(parts[1]);
                archiveCount += archived.estimatedDocumentCount();
                for (Document index : archived.listIndexes()) {
                    if (index.getBoolean("unique", false) && !"_id_".equals(index.getString("name"))) {
                        uniqueIndexes.add(ns + ": " + index.getString("name"));
                    }
                }
            }
            return Optional.of(new TieringSnapshot(lag, drained, fastCount, archiveCount, uniqueIndexes));
        } catch (MongoException | IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static MongoClient client(String uri) {
        return MongoClients.create(MongoClientSettings.builder()
                .applyConnectionString(new ConnectionString(uri))
                .applicationName("thermocline-operator")
                .applyToClusterSettings(c -> c.serverSelectionTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                .applyToSocketSettings(s -> s.connectTimeout(TIMEOUT_SECONDS, TimeUnit.SECONDS))
                .build());
    }
}
