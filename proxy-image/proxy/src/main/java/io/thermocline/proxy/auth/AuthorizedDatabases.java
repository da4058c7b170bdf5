package io.thermocline.proxy.auth;

import io.thermocline.security.authentication.StoredUser;
import io.thermocline.security.roles.Privileges;
import io.thermocline.security.roles.Target;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;

/**
 * Which databases listDatabases shows a user, as mongod decides it: all of them to a user with
 * the {@code listDatabases} action, unless it asks for {@code authorizedDatabases: true}; to
 * anyone else only those it holds a privilege in, and an error if it asks for
 * {@code authorizedDatabases: false}.
 */
public final class AuthorizedDatabases {
    /** What listDatabases answers for one user. */
    public sealed interface Listing {
    }

    /** The archive's answer as it is. */
    public record All() implements Listing {
    }

    /** The archive's answer without the databases these privileges name nothing in. */
    public record Only(Privileges privileges) implements Listing {
    }

    /** Error 13, as mongod's "Insufficient permissions to list all databases". */
    public record Refused() implements Listing {
    }

    private AuthorizedDatabases() {
    }

    /** {@code user} is null when authorization is not enforced (or nobody logged in, which authentication refuses first). */
    public static Listing of(StoredUser user, BsonDocument command) {
        if (user == null) {
            return new All();
        }
        boolean mayListAll = user.privileges().allows(new Target.Cluster(), "listDatabases");
        BsonValue asked = command.get("authorizedDatabases");
        if (asked != null && !asked.isNull()) {
            boolean onlyAuthorized = MongoBooleans.isTrue(asked);
            if (!onlyAuthorized && !mayListAll) {
                return new Refused();
            }
            return onlyAuthorized ? new Only(user.privileges()) : new All();
        }
        return mayListAll ? new All() : new Only(user.privileges());
    }

    /** The reply with only the databases {@code privileges} name something in, and {@code totalSize} of those. */
    public static RawBsonDocument filter(RawBsonDocument reply, Privileges privileges) {
        BsonDocument out = new BsonDocument();
        out.putAll(reply);
        BsonValue databases = out.get("databases");
        if (databases == null || !databases.isArray()) {
            return reply;
        }
        BsonArray kept = new BsonArray();
        long totalSize = 0;
        for (BsonValue db : databases.asArray()) {
            if (db.isDocument() && db.asDocument().isString("name") && privileges.anyOnDatabase(db.asDocument().getString("name").getValue())) {
                kept.add(db);
                BsonValue size = db.asDocument().get("sizeOnDisk");
                totalSize += size != null && size.isNumber() ? size.asNumber().longValue() : 0;
            }
        }
        out.put("databases", kept);
        if (out.containsKey("totalSize")) {
            out.put("totalSize", new BsonInt64(totalSize));
        }
        if (out.containsKey("totalSizeMb")) {
            out.put("totalSizeMb", new BsonInt64(totalSize / (1024 * 1024)));
        }
        return new RawBsonDocument(out, new BsonDocumentCodec());
    }
}
