package io.thermocline.wire;

import java.util.List;
import org.bson.RawBsonDocument;

/** An OP_MSG kind-1 section: documents sent beside the command body, e.g. {@code documents} of an insert. */
public record DocumentSequence(String identifier, List<RawBsonDocument> documents) {

    public DocumentSequence {
        documents = List.copyOf(documents);
    }
}
