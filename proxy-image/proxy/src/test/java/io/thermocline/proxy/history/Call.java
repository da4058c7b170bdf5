package io.thermocline.proxy.history;

import java.util.List;

/** What a client asked. Writes address one document by {@code _id}, except a batch insert. */
sealed interface Call {

    /** {@code insertMany} (or insertOne for one document); a key may already exist (then E11000 is the right answer). */
    record Insert(List<Doc> docs, boolean ordered) implements Call {
    }

    /** {@code updateOne({_id: key}, {$set: {value, age}})}. */
    record Update(Doc doc) implements Call {
    }

    /** {@code deleteOne({_id: key})}. */
    record Delete(int key) implements Call {
    }

    /** {@code find({_id: key})}. */
    record PointRead(int key) implements Call {
    }

    /** {@code find(filter)}. */
    record Scan(Filter filter) implements Call {
    }

    /** {@code countDocuments(filter)}. */
    record Count(Filter filter) implements Call {
    }

    default boolean isWrite() {
        return this instanceof Insert || this instanceof Update || this instanceof Delete;
    }
}
