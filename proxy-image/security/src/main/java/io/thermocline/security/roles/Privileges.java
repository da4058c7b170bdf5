package io.thermocline.security.roles;

import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/** Everything one user may do: the union of its roles' privileges, inherited ones included. */
public record Privileges(List<Privilege> granted) {
    public static final Privileges NONE = new Privileges(List.of());

    public Privileges {
        granted = List.copyOf(granted);
    }

    public boolean allows(Target target, String action) {
        for (Privilege p : granted) {
            if (p.allows(target, action)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether any privilege names {@code db} or something in it, as mongod's
     * {@code isAuthorizedForAnyActionOnAnyResourceInDB} (listDatabases' {@code authorizedDatabases}):
     * the database itself, a collection of it, a collection name in every database, any resource,
     * or any normal database (all but {@code local} and {@code config}).
     */
    public boolean anyOnDatabase(String db) {
        for (Privilege p : granted) {
            if (p.actions().isEmpty()) {
                continue;
            }
            boolean names = p.resource() instanceof ResourcePattern.AnyResource
                    || (p.resource() instanceof ResourcePattern.Namespace ns
                            && (ns.db().equals(db)
                                    || (ns.db().isEmpty()
                                            && (!ns.collection().isEmpty()
                                                    || !(db.equals("local") || db.equals("config"))))));
            if (names) {
                return true;
            }
        }
        return false;
    }

    /** Whether any privilege grants any action on {@code target} (mongod's {@code isAuthorizedForAnyActionOnResource}). */
    public boolean anyOn(Target target) {
        for (Privilege p : granted) {
            if (!p.actions().isEmpty() && p.resource().matches(target)) {
                return true;
            }
        }
        return false;
    }

    /** Reads an array of privilege documents, such as {@code inheritedPrivileges} of usersInfo. */
    public static Privileges fromArray(BsonArray array) {
        List<Privilege> out = new ArrayList<>();
        for (BsonValue v : array) {
            if (v.isDocument()) {
                out.add(Privilege.fromDocument(v.asDocument()));
            }
        }
        return new Privileges(out);
    }

    public BsonArray toArray() {
        BsonArray a = new BsonArray();
        granted.forEach(p -> a.add(p.toDocument()));
        return a;
    }

    public Privileges plus(Privileges more) {
        List<Privilege> all = new ArrayList<>(granted);
        all.addAll(more.granted);
        return new Privileges(all);
    }

    static Privileges of(BsonDocument... privileges) {
        List<Privilege> out = new ArrayList<>();
        for (BsonDocument d : privileges) {
            out.add(Privilege.fromDocument(d));
        }
        return new Privileges(out);
    }
}
