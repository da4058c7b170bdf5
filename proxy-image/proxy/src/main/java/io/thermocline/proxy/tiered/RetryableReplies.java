package io.thermocline.proxy.tiered;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Retryable-write semantics for the writes the proxy carries out itself instead of forwarding
 * (deletes with tombstones, findAndModify removes): the reply is remembered per
 * ({@code lsid}, {@code txnNumber}) and a retry gets the same reply without running again, as a
 * server would do. Writes forwarded to the fast tier keep the client's lsid and txnNumber, so the
 * fast tier deduplicates those itself. Bounded, per proxy instance.
 */
final class RetryableReplies {

    private record Key(BsonValue lsid, long txnNumber) {
    }

    private final Map<Key, RawBsonDocument> replies;

    RetryableReplies(int capacity) {
        this.replies = new LinkedHashMap<>(256, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Key, RawBsonDocument> eldest) {
                return size() > capacity;
            }
        };
    }

    synchronized Optional<RawBsonDocument> replay(Exchange x) {
        Key key = key(x);
        return key == null ? Optional.empty() : Optional.ofNullable(replies.get(key));
    }

    synchronized RawBsonDocument remember(Exchange x, RawBsonDocument reply) {
        Key key = key(x);
        if (key != null) {
            replies.put(key, reply);
        }
        return reply;
    }

    private static Key key(Exchange x) {
        if (!x.traits().retryableWrite() || x.session().isEmpty()) {
            return null;
        }
        return new Key(x.session().get().id(), x.traits().txnNumber());
    }
}
