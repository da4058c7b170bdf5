package io.thermocline.proxy.auth;

import io.thermocline.security.roles.Privileges;
import io.thermocline.security.roles.Target;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * listCollections with {@code nameOnly: true, authorizedCollections: true} (what mongosh's {@code show collections} and
 * the drivers' collection-name listings send), as mongod answers it: any user holding a privilege in the database may
 * run it, and it lists only the collections the user holds a privilege on (a database-wide privilege covers every
 * collection but {@code system.*} ones, which must be named).
 */
public final class AuthorizedCollections {
    private AuthorizedCollections() {}

    /** Whether {@code command} (a listCollections) asks only for the collections the user may act on. */
    public static boolean asksForOwn(BsonDocument command) {
        return MongoBooleans.isTrue(command.get("nameOnly"))
                && MongoBooleans.isTrue(command.get("authorizedCollections"));
    }

    /**
     * The command as sent to the archive: every name in the first batch, so that {@link #filter} sees them all (a
     * name-only listing of a few hundred thousand collections still fits mongod's 16 MB batch).
     */
    public static BsonDocument inOneBatch(BsonDocument command) {
        BsonDocument sent = new BsonDocument();
        sent.putAll(command);
        sent.put("cursor", new BsonDocument("batchSize", new BsonInt32(Integer.MAX_VALUE)));
        return sent;
    }

    /** The reply's first batch without the collections of {@code db} that {@code privileges} grant nothing on. */
    public static RawBsonDocument filter(RawBsonDocument reply, String db, Privileges privileges) {
        BsonValue cursor = reply.get("cursor");
        if (!(cursor instanceof BsonDocument c) || !c.isArray("firstBatch")) {
            return reply;
        }
        BsonArray kept = new BsonArray();
        for (BsonValue entry : c.getArray("firstBatch")) {
            if (entry instanceof BsonDocument d
                    && d.isString("name")
                    && privileges.anyOn(
                            new Target.Collection(db, d.getString("name").getValue()))) {
                kept.add(entry);
            }
        }
        BsonDocument out = new BsonDocument();
        out.putAll(reply);
        BsonDocument filtered = new BsonDocument();
        filtered.putAll(c);
        filtered.put("firstBatch", kept);
        out.put("cursor", filtered);
        return new RawBsonDocument(out, new BsonDocumentCodec());
    }
}
