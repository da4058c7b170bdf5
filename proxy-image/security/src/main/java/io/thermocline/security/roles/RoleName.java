package io.thermocline.security.roles;

import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/** A role, named as MongoDB names it: {@code {role, db}}. */
public record RoleName(String role, String db) {

    /** Reads {@code {role: "r", db: "d"}}, or a bare {@code "r"} meaning a role of {@code defaultDb}. */
    public static RoleName from(BsonValue v, String defaultDb) {
        if (v.isString()) {
            return new RoleName(v.asString().getValue(), defaultDb);
        }
        if (v.isDocument() && v.asDocument().isString("role")) {
            BsonDocument d = v.asDocument();
            return new RoleName(d.getString("role").getValue(), d.isString("db") ? d.getString("db").getValue() : defaultDb);
        }
        throw new IllegalArgumentException("a role is {role: <name>, db: <database>}, not " + v);
    }

    public BsonDocument toDocument() {
        return new BsonDocument("role", new BsonString(role)).append("db", new BsonString(db));
    }

    @Override
    public String toString() {
        return role + "@" + db;
    }
}
