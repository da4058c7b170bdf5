package io.thermocline.embedded.write;

import io.netty.channel.Channel;
import io.thermocline.embedded.storage.MemberStore;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.json.JsonParseException;

/**
 * A duplicate key error (11000) as mongod reports it: beside {@code errmsg} (which names the index and the
 * key), {@code keyPattern} (the index's key) and {@code keyValue} (the duplicated values). The storage
 * engine gives only the message; the rest is taken from it and from the index's specification.
 */
final class DuplicateKeyErrors {

    private static final Pattern MESSAGE = Pattern.compile("index: (\\S+) dup key: (\\{.*\\})\\s*$");

    private DuplicateKeyErrors() {}

    /**
     * {@code error} (a write error, or an error reply) with {@code keyPattern} and {@code keyValue} when it is
     * a duplicate key whose index {@code keyOf} knows by name; otherwise unchanged.
     */
    static BsonDocument withKey(BsonDocument error, Function<String, Optional<BsonDocument>> keyOf) {
        BsonValue code = error.get("code");
        BsonValue message = error.get("errmsg");
        if (code == null
                || !code.isNumber()
                || code.asNumber().intValue() != 11000
                || message == null
                || !message.isString()
                || error.containsKey("keyPattern")) {
            return error;
        }
        Matcher m = MESSAGE.matcher(message.asString().getValue());
        if (!m.find()) {
            return error;
        }
        Optional<BsonDocument> pattern = keyOf.apply(m.group(1));
        BsonDocument value;
        try {
            value = BsonDocument.parse(m.group(2));
        } catch (JsonParseException e) {
            return error;
        }
        if (pattern.isEmpty()) {
            return error;
        }
        BsonDocument out = new BsonDocument();
        error.forEach((k, v) -> {
            out.append(k, v);
            if (k.equals("errmsg")) {
                out.append("keyPattern", pattern.get()).append("keyValue", value);
            }
        });
        return out;
    }

    /** The key pattern of index {@code name} of {@code db.coll}, from the store's own listIndexes. */
    static Optional<BsonDocument> indexKey(MemberStore store, Channel channel, String db, String coll, String name) {
        BsonDocument reply = store.command(channel, db, new BsonDocument("listIndexes", new BsonString(coll)));
        if (!WriteExecutor.isOk(reply) || !reply.isDocument("cursor")) {
            return Optional.empty();
        }
        for (BsonValue spec : reply.getDocument("cursor").getArray("firstBatch", new BsonArray())) {
            if (spec.isDocument()
                    && spec.asDocument().isDocument("key")
                    && new BsonString(name).equals(spec.asDocument().get("name"))) {
                return Optional.of(spec.asDocument().getDocument("key"));
            }
        }
        return Optional.empty();
    }
}
