package io.thermocline.proxy.auth;

import io.thermocline.proxy.auth.CommandPrivileges.Need;
import io.thermocline.security.roles.Target;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What the commands that create and change users and roles need, as mongod's auth_checks rule them: besides the
 * action on the database they are sent to, granting a role needs {@code grantRole} on the role's database, granting a
 * privilege needs {@code grantRole} on the privilege's database (on {@code admin} for the cluster, any resource or
 * several databases), and revoking needs {@code revokeRole} likewise. The proxy forwards these commands as its own
 * user, which may grant anything: without these checks a {@code userAdmin} of one database could create a user there
 * with {@code root}.
 */
final class UserAdminPrivileges {
    static final Set<String> COMMANDS = Set.of(
            "createuser",
            "updateuser",
            "grantrolestouser",
            "revokerolesfromuser",
            "createrole",
            "updaterole",
            "grantrolestorole",
            "revokerolesfromrole",
            "grantprivilegestorole",
            "revokeprivilegesfromrole");
    private static final Set<String> PASSWORD_FIELDS = Set.of("pwd", "digestPassword", "mechanisms");

    private UserAdminPrivileges() {}

    static void collect(String command, String db, BsonDocument body, List<Need> needs) {
        Target.Database own = new Target.Database(db);
        switch (command) {
            case "createuser" -> {
                needs.add(new Need(own, "createUser"));
                roles(db, body.get("roles"), "grantRole", needs);
                restrictions(own, body, needs);
            }
            case "updateuser" -> {
                if (PASSWORD_FIELDS.stream().anyMatch(body::containsKey)) {
                    needs.add(new Need(own, "changePassword"));
                }
                if (body.containsKey("customData")) {
                    needs.add(new Need(own, "changeCustomData"));
                }
                if (body.containsKey("roles")) {
                    // as mongod: the user's current roles are replaced, whatever they are, so revoking any must be
                    // allowed
                    needs.add(new Need(new Target.AnyDatabase(), "revokeRole"));
                    roles(db, body.get("roles"), "grantRole", needs);
                }
                restrictions(own, body, needs);
            }
            case "createrole" -> {
                needs.add(new Need(own, "createRole"));
                roles(db, body.get("roles"), "grantRole", needs);
                privileges(body.get("privileges"), "grantRole", needs);
                restrictions(own, body, needs);
            }
            case "updaterole" -> {
                needs.add(new Need(new Target.AnyDatabase(), "revokeRole"));
                roles(db, body.get("roles"), "grantRole", needs);
                privileges(body.get("privileges"), "grantRole", needs);
                restrictions(own, body, needs);
            }
            case "grantrolestouser", "grantrolestorole" -> roles(db, body.get("roles"), "grantRole", needs);
            case "revokerolesfromuser", "revokerolesfromrole" -> roles(db, body.get("roles"), "revokeRole", needs);
            case "grantprivilegestorole" -> privileges(body.get("privileges"), "grantRole", needs);
            case "revokeprivilegesfromrole" -> privileges(body.get("privileges"), "revokeRole", needs);
            default -> throw new IllegalArgumentException(command + " is not a user or role command");
        }
    }

    /** {@code action} on the database of each role: a name is a role of {@code db}, a document names its database. */
    private static void roles(String db, BsonValue roles, String action, List<Need> needs) {
        if (roles == null) {
            return;
        }
        if (!roles.isArray()) {
            needs.add(new Need(new Target.Cluster(), CommandPrivileges.UNKNOWN_ACTION));
            return;
        }
        for (BsonValue role : roles.asArray()) {
            if (role.isString()) {
                needs.add(new Need(new Target.Database(db), action));
            } else if (role instanceof BsonDocument d && d.isString("db")) {
                needs.add(new Need(new Target.Database(d.getString("db").getValue()), action));
            } else {
                needs.add(new Need(new Target.Cluster(), CommandPrivileges.UNKNOWN_ACTION));
            }
        }
    }

    /**
     * {@code action} on the database a privilege's resource names ({@code {db: "shop", collection: ...}}); on
     * {@code admin} for the cluster, any resource, or a resource in every database ({@code db: ""}).
     */
    private static void privileges(BsonValue privileges, String action, List<Need> needs) {
        if (privileges == null) {
            return;
        }
        if (!privileges.isArray()) {
            needs.add(new Need(new Target.Cluster(), CommandPrivileges.UNKNOWN_ACTION));
            return;
        }
        for (BsonValue p : privileges.asArray()) {
            BsonValue resource = p instanceof BsonDocument d ? d.get("resource") : null;
            if (!(resource instanceof BsonDocument r)) {
                needs.add(new Need(new Target.Cluster(), CommandPrivileges.UNKNOWN_ACTION));
            } else if (r.isString("db") && !r.getString("db").getValue().isEmpty()) {
                needs.add(new Need(new Target.Database(r.getString("db").getValue()), action));
            } else {
                needs.add(new Need(new Target.Database("admin"), action));
            }
        }
    }

    private static void restrictions(Target.Database own, BsonDocument body, List<Need> needs) {
        if (body.containsKey("authenticationRestrictions")) {
            needs.add(new Need(own, "setAuthenticationRestriction"));
        }
    }
}
