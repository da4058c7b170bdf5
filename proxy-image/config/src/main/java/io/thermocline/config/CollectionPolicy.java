package io.thermocline.config;

import java.time.Duration;

/**
 * The tiering policy of one collection: documents whose {@code ageField} is within
 * {@code hotWindow} of now belong in the fast tier. {@code ageField} is a date field,
 * or {@code _id} for the ObjectId's timestamp. {@code secondaryReads}: whether primary reads routed to
 * the archive may be offloaded to its caught-up secondaries (absent: {@link SecondaryReads#PRIMARY}).
 */
public record CollectionPolicy(String database, String collection, String ageField, Duration hotWindow,
                               SecondaryReads secondaryReads) {

    public CollectionPolicy {
        secondaryReads = secondaryReads == null ? SecondaryReads.PRIMARY : secondaryReads;
    }

    /** A policy whose reads go where the client's read preference sends them. */
    public CollectionPolicy(String database, String collection, String ageField, Duration hotWindow) {
        this(database, collection, ageField, hotWindow, SecondaryReads.PRIMARY);
    }

    public String namespace() {
        return database + "." + collection;
    }

    public boolean agedByObjectId() {
        return "_id".equals(ageField);
    }
}
