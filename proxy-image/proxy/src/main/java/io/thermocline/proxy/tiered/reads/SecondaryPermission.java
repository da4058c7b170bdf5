package io.thermocline.proxy.tiered.reads;

import io.thermocline.config.CollectionPolicy;
import io.thermocline.config.SecondaryReads;
import io.thermocline.proxy.topology.ReadPreference;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Whether an archive-routed read of a tiered collection may be served by an archive secondary, and under which
 * read preference: the client's own when it allows secondaries, else {@code secondaryPreferred} when the
 * collection's policy offloads primary reads. Never inside a transaction, and never for a read concern that
 * names its own point in time or needs the primary ({@code snapshot}, {@code linearizable}, {@code atClusterTime}).
 * A pure function; which member then serves it is {@code MemberSelector}'s choice, by applied optime and load.
 */
public final class SecondaryPermission {

    private static final Set<String> PRESENT_LEVELS = Set.of("local", "available", "majority");
    private static final BsonDocument OFFLOAD = new BsonDocument("mode", new BsonString(ReadPreference.OFFLOAD.mode().wireName()));

    private SecondaryPermission() {
    }

    /**
     * @param command the client's command
     * @return the {@code $readPreference} to send to the archive with the read, or empty (the primary)
     * @throws io.thermocline.proxy.topology.InvalidReadPreference for a read preference a mongos refuses
     */
    public static Optional<BsonDocument> of(BsonDocument command, CollectionPolicy policy, boolean inTransaction) {
        BsonValue clientPreference = command.get("$readPreference");
        boolean clientAllows = ReadPreference.parse(clientPreference).mode().allowsSecondaries();
        if (inTransaction || !presentReadConcern(command.get("readConcern"))) {
            return Optional.empty();
        }
        if (clientAllows) {
            return Optional.of(clientPreference.asDocument());
        }
        return policy != null && policy.secondaryReads() == SecondaryReads.OFFLOAD ? Optional.of(OFFLOAD) : Optional.empty();
    }

    private static boolean presentReadConcern(BsonValue readConcern) {
        if (readConcern == null) {
            return true;
        }
        if (!readConcern.isDocument() || readConcern.asDocument().containsKey("atClusterTime")) {
            return false;
        }
        BsonValue level = readConcern.asDocument().get("level");
        return level == null || level.isString() && PRESENT_LEVELS.contains(level.asString().getValue());
    }
}
