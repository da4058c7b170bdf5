package io.thermocline.security.roles;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Custom roles (their own privileges and the roles they inherit) together with the built-in
 * ones: resolves a user's roles to the privileges they grant, following inheritance once per role.
 */
public final class RoleGraph {
    /** A custom role as createRole defines it and rolesInfo returns it. */
    public record CustomRole(RoleName name, List<Privilege> privileges, List<RoleName> roles) {
        public CustomRole {
            privileges = List.copyOf(privileges);
            roles = List.copyOf(roles);
        }

        public static CustomRole fromDocument(BsonDocument d, String defaultDb) {
            RoleName name = RoleName.from(d, defaultDb);
            List<Privilege> privileges = new ArrayList<>();
            for (BsonValue p : d.getArray("privileges", new BsonArray())) {
                privileges.add(Privilege.fromDocument(p.asDocument()));
            }
            List<RoleName> roles = new ArrayList<>();
            for (BsonValue r : d.getArray("roles", new BsonArray())) {
                roles.add(RoleName.from(r, name.db()));
            }
            return new CustomRole(name, privileges, roles);
        }
    }

    private final Map<RoleName, CustomRole> custom = new LinkedHashMap<>();

    public RoleGraph(List<CustomRole> roles) {
        roles.forEach(r -> custom.put(r.name(), r));
    }

    public boolean exists(RoleName role) {
        return custom.containsKey(role) || BuiltinRoles.isBuiltin(role);
    }

    /** Every role reachable from {@code roles}, themselves included, in breadth-first order. */
    public List<RoleName> closure(List<RoleName> roles) {
        Set<RoleName> seen = new HashSet<>();
        List<RoleName> out = new ArrayList<>();
        Deque<RoleName> todo = new ArrayDeque<>(roles);
        while (!todo.isEmpty()) {
            RoleName r = todo.poll();
            if (!seen.add(r)) {
                continue;
            }
            out.add(r);
            CustomRole c = custom.get(r);
            if (c != null) {
                todo.addAll(c.roles());
            }
        }
        return out;
    }

    /**
     * The privileges {@code roles} grant. A role that is neither built in nor defined grants
     * nothing (fail closed), as mongod treats a role dropped after it was granted.
     */
    public Privileges privileges(List<RoleName> roles) {
        List<Privilege> out = new ArrayList<>();
        for (RoleName r : closure(roles)) {
            CustomRole c = custom.get(r);
            if (c != null) {
                out.addAll(c.privileges());
            } else {
                BuiltinRoles.privileges(r).ifPresent(p -> out.addAll(p.granted()));
            }
        }
        return new Privileges(out);
    }
}
