package io.thermocline.embedded.storage;

import de.bwaldvogel.mongo.bson.Document;

/** A collection whose stored documents a {@link SecondaryIndex} walk reads by the positions its entries hold. */
interface PositionedDocuments {

    /** The stored document (not a copy: read it under the collection's read lock), or null when none is there. */
    Document documentAt(Object position);
}
