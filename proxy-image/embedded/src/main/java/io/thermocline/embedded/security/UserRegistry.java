package io.thermocline.embedded.security;

import io.thermocline.security.UserName;
import io.thermocline.security.authentication.Authenticator;
import io.thermocline.security.authentication.StoredUser;
import io.thermocline.security.authentication.UserDirectory;
import io.thermocline.security.roles.RoleGraph;
import io.thermocline.security.roles.RoleName;
import io.thermocline.security.scram.ScramCredential;
import io.thermocline.security.scram.ScramMechanism;
import java.util.Arrays;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonString;
import org.bson.BsonValue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The replica set's users and custom roles, with mongod's user-management commands:
 * {@code createUser}, {@code updateUser}, {@code dropUser}, {@code usersInfo} (with
 * {@code showCredentials} and {@code showPrivileges}), {@code grantRolesToUser},
 * {@code revokeRolesFromUser}, {@code createRole}, {@code dropRole}, {@code rolesInfo}.
 * One registry serves every member of the set at once (mongod replicates {@code admin.system.users});
 * it lives in memory, so users are created again after the set restarts.
 */
public final class UserRegistry implements UserDirectory {
    private record UserRecord(UserName name, UUID id, Map<ScramMechanism, ScramCredential> credentials, List<RoleName> roles) {
    }

    private final Map<UserName, UserRecord> users = new LinkedHashMap<>();
    private final Map<RoleName, RoleGraph.CustomRole> roles = new LinkedHashMap<>();

    @Override
    public synchronized CompletableFuture<Optional<StoredUser>> find(UserName name) {
        UserRecord r = users.get(name);
        return CompletableFuture.completedFuture(r == null ? Optional.empty()
                : Optional.of(new StoredUser(r.name, r.credentials, r.roles, graph().privileges(r.roles))));
    }

    @Override
    public String describe() {
        return "embedded";
    }

    public synchronized boolean isEmpty() {
        return users.isEmpty();
    }

    /** Creates a user as {@code createUser} does, with both SCRAM mechanisms. */
    public synchronized void create(UserName name, char[] password, List<RoleName> granted) {
        if (users.containsKey(name)) {
            throw new UserAdminException(51003, "Location51003", "User \"" + name + "\" already exists");
        }
        users.put(name, new UserRecord(name, UUID.randomUUID(), derive(name, password, List.of(ScramMechanism.values())), checked(granted)));
    }

    /** Answers a user- or role-management command, or returns null when {@code command} is none. */
    synchronized BsonDocument command(String lower, String db, BsonDocument command) {
        try {
            return switch (lower) {
                case "createuser" -> createUser(db, command);
                case "updateuser" -> updateUser(db, command);
                case "dropuser" -> {
                    UserName name = new UserName(command.getString(command.getFirstKey()).getValue(), db);
                    if (users.remove(name) == null) {
                        throw new UserAdminException(11, "UserNotFound", "User '" + name + "' not found");
                    }
                    yield ok();
                }
                case "usersinfo" -> usersInfo(db, command);
                case "grantrolestouser", "revokerolesfromuser" -> changeRoles(db, command, lower.startsWith("grant"));
                case "createrole" -> createRole(db, command);
                case "droprole" -> {
                    RoleName name = new RoleName(command.getString(command.getFirstKey()).getValue(), db);
                    if (roles.remove(name) == null) {
                        throw new UserAdminException(31, "RoleNotFound", "Role '" + name + "' not found");
                    }
                    yield ok();
                }
                case "rolesinfo" -> rolesInfo(db, command);
                default -> null;
            };
        } catch (UserAdminException e) {
            return Authenticator.error(e.code, e.codeName, e.getMessage());
        } catch (RuntimeException e) {
            return Authenticator.error(2, "BadValue", lower + ": " + e.getMessage());
        }
    }

    private BsonDocument createUser(String db, BsonDocument c) {
        UserName name = new UserName(c.getString(c.getFirstKey()).getValue(), db);
        if (!c.isString("pwd")) {
            throw new UserAdminException(2, "BadValue", "createUser needs pwd: the embedded replica set has SCRAM users only");
        }
        if (users.containsKey(name)) {
            throw new UserAdminException(51003, "Location51003", "User \"" + name + "\" already exists");
        }
        users.put(name, new UserRecord(name, UUID.randomUUID(), derive(name, c.getString("pwd").getValue().toCharArray(), mechanisms(c)),
                checked(roleList(c.getArray("roles", new BsonArray()), db))));
        return ok();
    }

    private BsonDocument updateUser(String db, BsonDocument c) {
        UserName name = new UserName(c.getString(c.getFirstKey()).getValue(), db);
        UserRecord r = users.get(name);
        if (r == null) {
            throw new UserAdminException(11, "UserNotFound", "User '" + name + "' not found");
        }
        Map<ScramMechanism, ScramCredential> credentials = c.isString("pwd")
                ? derive(name, c.getString("pwd").getValue().toCharArray(), mechanisms(c)) : r.credentials;
        List<RoleName> granted = c.isArray("roles") ? checked(roleList(c.getArray("roles"), db)) : r.roles;
        users.put(name, new UserRecord(name, r.id, credentials, granted));
        return ok();
    }

    private BsonDocument changeRoles(String db, BsonDocument c, boolean grant) {
        UserName name = new UserName(c.getString(c.getFirstKey()).getValue(), db);
        UserRecord r = users.get(name);
        if (r == null) {
            throw new UserAdminException(11, "UserNotFound", "User '" + name + "' not found");
        }
        List<RoleName> changed = new ArrayList<>(r.roles);
        List<RoleName> named = checked(roleList(c.getArray("roles"), db));
        if (grant) {
            named.stream().filter(x -> !changed.contains(x)).forEach(changed::add);
        } else {
            changed.removeAll(named);
        }
        users.put(name, new UserRecord(name, r.id, r.credentials, changed));
        return ok();
    }

    private BsonDocument usersInfo(String db, BsonDocument c) {
        boolean credentials = c.getBoolean("showCredentials", BsonBoolean.FALSE).getValue();
        boolean privileges = c.getBoolean("showPrivileges", BsonBoolean.FALSE).getValue();
        BsonValue which = c.get(c.getFirstKey());
        List<UserRecord> found = new ArrayList<>();
        if (which.isNumber()) {
            users.values().stream().filter(u -> u.name.db().equals(db)).forEach(found::add);
        } else {
            for (BsonValue v : which.isArray() ? which.asArray() : new BsonArray(List.of(which))) {
                UserName n = v.isString() ? new UserName(v.asString().getValue(), db)
                        : new UserName(v.asDocument().getString("user").getValue(), v.asDocument().getString("db").getValue());
                Optional.ofNullable(users.get(n)).ifPresent(found::add);
            }
        }
        RoleGraph graph = graph();
        BsonArray out = new BsonArray();
        for (UserRecord u : found) {
            BsonArray mechs = new BsonArray();
            u.credentials.keySet().forEach(m -> mechs.add(new BsonString(m.mongoName())));
            BsonDocument d = new BsonDocument("_id", new BsonString(u.name.db() + "." + u.name.user()))
                    .append("userId", new BsonBinary(BsonBinarySubType.UUID_STANDARD, bytes(u.id)))
                    .append("user", new BsonString(u.name.user())).append("db", new BsonString(u.name.db()))
                    .append("roles", names(u.roles)).append("mechanisms", mechs);
            if (credentials) {
                BsonDocument creds = new BsonDocument();
                u.credentials.forEach((m, cred) -> creds.append(m.mongoName(), cred.toDocument()));
                d.append("credentials", creds);
            }
            if (privileges) {
                d.append("inheritedRoles", names(graph.closure(u.roles))).append("inheritedPrivileges", graph.privileges(u.roles).toArray());
            }
            out.add(d);
        }
        return new BsonDocument("users", out).append("ok", new BsonDouble(1));
    }

    private BsonDocument createRole(String db, BsonDocument c) {
        RoleName name = new RoleName(c.getString(c.getFirstKey()).getValue(), db);
        if (roles.containsKey(name) || graph().exists(name)) {
            throw new UserAdminException(51002, "Location51002", "Role \"" + name + "\" already exists");
        }
        BsonDocument definition = new BsonDocument("role", new BsonString(name.role())).append("db", new BsonString(db))
                .append("privileges", c.getArray("privileges", new BsonArray())).append("roles", c.getArray("roles", new BsonArray()));
        RoleGraph.CustomRole role = RoleGraph.CustomRole.fromDocument(definition, db);
        checked(role.roles());
        roles.put(name, role);
        return ok();
    }

    private BsonDocument rolesInfo(String db, BsonDocument c) {
        boolean privileges = c.getBoolean("showPrivileges", BsonBoolean.FALSE).getValue();
        BsonValue which = c.get(c.getFirstKey());
        List<RoleGraph.CustomRole> found = new ArrayList<>();
        if (which.isNumber()) {
            roles.values().stream().filter(r -> r.name().db().equals(db)).forEach(found::add);
        } else {
            for (BsonValue v : which.isArray() ? which.asArray() : new BsonArray(List.of(which))) {
                Optional.ofNullable(roles.get(RoleName.from(v, db))).ifPresent(found::add);
            }
        }
        RoleGraph graph = graph();
        BsonArray out = new BsonArray();
        for (RoleGraph.CustomRole r : found) {
            BsonDocument d = new BsonDocument("role", new BsonString(r.name().role())).append("db", new BsonString(r.name().db()))
                    .append("isBuiltin", BsonBoolean.FALSE).append("roles", names(r.roles()))
                    .append("inheritedRoles", names(graph.closure(r.roles())));
            if (privileges) {
                BsonArray own = new BsonArray();
                r.privileges().forEach(p -> own.add(p.toDocument()));
                d.append("privileges", own).append("inheritedPrivileges", graph.privileges(List.of(r.name())).toArray());
            }
            out.add(d);
        }
        return new BsonDocument("roles", out).append("ok", new BsonDouble(1));
    }

    private RoleGraph graph() {
        return new RoleGraph(List.copyOf(roles.values()));
    }

    private List<RoleName> checked(List<RoleName> granted) {
        RoleGraph graph = graph();
        for (RoleName r : granted) {
            if (!graph.exists(r)) {
                throw new UserAdminException(31, "RoleNotFound", "Could not find role: " + r);
            }
        }
        return new ArrayList<>(granted);
    }

    private static List<ScramMechanism> mechanisms(BsonDocument c) {
        if (!c.isArray("mechanisms")) {
            return List.of(ScramMechanism.values());
        }
        List<ScramMechanism> out = new ArrayList<>();
        for (BsonValue v : c.getArray("mechanisms")) {
            out.add(ScramMechanism.byMongoName(v.isString() ? v.asString().getValue() : "")
                    .orElseThrow(() -> new UserAdminException(2, "BadValue", "mechanisms are SCRAM-SHA-1 and SCRAM-SHA-256")));
        }
        return out;
    }

    private static Map<ScramMechanism, ScramCredential> derive(UserName name, char[] password, List<ScramMechanism> mechanisms) {
        Map<ScramMechanism, ScramCredential> out = new EnumMap<>(ScramMechanism.class);
        for (ScramMechanism m : mechanisms) {
            // mongod's minimum iteration count: the embedded set is for tests, where logins should be quick.
            out.put(m, ScramCredential.derive(m, name.user(), password, ScramMechanism.MIN_ITERATIONS));
        }
        Arrays.fill(password, '\0');
        return out;
    }

    private static List<RoleName> roleList(BsonArray array, String db) {
        List<RoleName> out = new ArrayList<>();
        array.forEach(v -> out.add(RoleName.from(v, db)));
        return out;
    }

    private static BsonArray names(List<RoleName> roles) {
        BsonArray a = new BsonArray();
        roles.forEach(r -> a.add(r.toDocument()));
        return a;
    }

    private static byte[] bytes(UUID id) {
        return ByteBuffer.allocate(16).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).array();
    }

    private static BsonDocument ok() {
        return new BsonDocument("ok", new BsonDouble(1));
    }

    private static final class UserAdminException extends RuntimeException {
        final int code;
        final String codeName;

        UserAdminException(int code, String codeName, String message) {
            super(message, null, false, false);
            this.code = code;
            this.codeName = codeName;
        }
    }
}
