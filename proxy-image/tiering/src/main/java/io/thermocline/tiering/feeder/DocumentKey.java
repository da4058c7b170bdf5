package io.thermocline.tiering.feeder;

import io.thermocline.tiering.state.BsonOrder;
import org.bson.BsonValue;

/** A document's {@code _id} compared as MongoDB compares it (1, 1.0 and NumberLong(1) are one document). */
record DocumentKey(BsonValue id) {
    @Override
    public boolean equals(Object other) {
        return other instanceof DocumentKey key && BsonOrder.compare(id, key.id) == 0;
    }

    @Override
    public int hashCode() {
        return BsonOrder.hash(id);
    }
}
