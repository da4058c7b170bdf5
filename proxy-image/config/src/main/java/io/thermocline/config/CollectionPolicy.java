package io.thermocline.config;

import java.time.Duration;

/**
 * The tiering policy of one collection: documents whose {@code ageField} is within
 * {@code hotWindow} of now belong in the fast tier. {@code ageField} is a date field,
 * or {@code _id} for the ObjectId's timestamp.
 */
public record CollectionPolicy(String database, String collection, String ageField, Duration hotWindow) {

    public String namespace() {
        return database + "." + collection;
    }

    public boolean agedByObjectId() {
        return "_id".equals(ageField);
    }
}
