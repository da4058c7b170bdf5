package io.thermocline.security;

import org.bson.BsonDocument;
import org.bson.BsonString;

/** A MongoDB user: its name and the database it was created in (its authentication database). */
public record UserName(String user, String db) {
    /** The database of users whose proof is outside the server: x.509 subjects. */
    public static final String EXTERNAL = "$external";

    public UserName {
        if (user == null || user.isEmpty() || db == null || db.isEmpty()) {
            throw new IllegalArgumentException("a user needs a name and a database");
        }
    }

    /** The {@code saslSupportedMechs} form, {@code db.user}. */
    public static UserName parseQualified(String dbDotUser) {
        int dot = dbDotUser.indexOf('.');
        if (dot <= 0 || dot == dbDotUser.length() - 1) {
            throw new IllegalArgumentException("expected <db>.<user>, got '" + dbDotUser + "'");
        }
        return new UserName(dbDotUser.substring(dot + 1), dbDotUser.substring(0, dot));
    }

    public BsonDocument toDocument() {
        return new BsonDocument("user", new BsonString(user)).append("db", new BsonString(db));
    }

    @Override
    public String toString() {
        return user + "@" + db;
    }
}
