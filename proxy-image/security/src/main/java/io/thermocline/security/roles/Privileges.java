package io.thermocline.security.roles;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.util.ArrayList;
import java.util.List;

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
