package io.thermocline.proxy.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.thermocline.security.UserName;
import io.thermocline.security.authentication.StoredUser;
import io.thermocline.security.authentication.UserDirectory;
import io.thermocline.security.roles.RoleGraph;
import io.thermocline.security.roles.RoleName;
import io.thermocline.security.scram.ScramCredential;
import io.thermocline.security.scram.ScramMechanism;
import java.util.Arrays;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Users and custom roles from a YAML or JSON file (typically a mounted Secret), for deployments
 * that do not take users from the archive. Each user has either a {@code password} (hashed at load,
 * never kept) or the {@code credentials} document {@code usersInfo} shows. The file is re-read when
 * it changes; a file that no longer parses keeps the previous users and is reported in the log.
 * <pre>
 * users:
 *   - {user: app, db: admin, password: "...", roles: [{role: readWrite, db: shop}]}
 *   - {user: audit, db: admin, credentials: {SCRAM-SHA-256: {iterationCount: 15000, salt: .., storedKey: .., serverKey: ..}},
 *      roles: [{role: reporting, db: admin}]}
 * roles:
 *   - {role: reporting, db: admin, privileges: [{resource: {db: shop, collection: orders}, actions: [find]}], roles: []}
 * </pre>
 */
public final class UsersFile implements UserDirectory {
    private static final Logger LOG = LoggerFactory.getLogger(UsersFile.class);
    private static final long CHECK_EVERY_NANOS = 1_000_000_000L;

    private final Path path;
    private volatile Map<UserName, StoredUser> users;
    private volatile FileTime loadedVersion;
    private volatile long checkedAt;

    public UsersFile(Path path) {
        this.path = path;
        try {
            this.loadedVersion = Files.getLastModifiedTime(path);
            this.users = parse(Files.readString(path));
        } catch (IOException e) {
            throw new IllegalArgumentException("auth.usersFile: " + path + " cannot be read: " + e.getMessage(), e);
        }
        this.checkedAt = System.nanoTime();
    }

    @Override
    public CompletableFuture<Optional<StoredUser>> find(UserName name) {
        reloadIfChanged();
        return CompletableFuture.completedFuture(Optional.ofNullable(users.get(name)));
    }

    @Override
    public String describe() {
        return "file:" + path;
    }

    private void reloadIfChanged() {
        long now = System.nanoTime();
        if (now - checkedAt < CHECK_EVERY_NANOS) {
            return;
        }
        synchronized (this) {
            checkedAt = now;
            try {
                FileTime version = Files.getLastModifiedTime(path);
                if (version.equals(loadedVersion)) {
                    return;
                }
                users = parse(Files.readString(path));
                loadedVersion = version;
                LOG.info("event=users_file_reloaded path={} users={}", path, users.size());
            } catch (IOException | IllegalArgumentException e) {
                LOG.error("event=users_file_invalid path={} problem=\"{}\" action=\"keeping the users loaded before\"", path, e.getMessage());
            }
        }
    }

    /** Parses the file's text; every problem names the entry, never a password or a key. */
    static Map<UserName, StoredUser> parse(String text) {
        BsonDocument root;
        try {
            JsonNode tree = new ObjectMapper(new YAMLFactory()).readTree(text);
            root = tree == null || tree.isMissingNode() || tree.isNull() ? new BsonDocument() : BsonDocument.parse(tree.toString());
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("users file is not valid YAML or JSON");
        }
        List<RoleGraph.CustomRole> roles = new ArrayList<>();
        BsonArray roleDocs = root.getArray("roles", new BsonArray());
        for (int i = 0; i < roleDocs.size(); i++) {
            try {
                roles.add(RoleGraph.CustomRole.fromDocument(roleDocs.get(i).asDocument(), "admin"));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("roles[" + i + "]: " + e.getMessage());
            }
        }
        RoleGraph graph = new RoleGraph(roles);
        Map<UserName, StoredUser> out = new HashMap<>();
        BsonArray userDocs = root.getArray("users", new BsonArray());
        for (int i = 0; i < userDocs.size(); i++) {
            StoredUser u = user(userDocs.get(i), i, graph);
            if (out.put(u.name(), u) != null) {
                throw new IllegalArgumentException("users[" + i + "]: " + u.name() + " is listed twice");
            }
        }
        return Map.copyOf(out);
    }

    private static StoredUser user(BsonValue v, int i, RoleGraph graph) {
        String at = "users[" + i + "]";
        if (!v.isDocument() || !v.asDocument().isString("user")) {
            throw new IllegalArgumentException(at + ": needs user, db, password or credentials, and roles");
        }
        BsonDocument d = v.asDocument();
        UserName name = new UserName(d.getString("user").getValue(), d.isString("db") ? d.getString("db").getValue() : "admin");
        Map<ScramMechanism, ScramCredential> credentials = new EnumMap<>(ScramMechanism.class);
        if (d.isString("password")) {
            List<ScramMechanism> mechanisms = new ArrayList<>();
            for (BsonValue m : d.getArray("mechanisms", new BsonArray(List.of(new BsonString("SCRAM-SHA-256"),
                    new BsonString("SCRAM-SHA-1"))))) {
                mechanisms.add(ScramMechanism.byMongoName(m.isString() ? m.asString().getValue() : "")
                        .orElseThrow(() -> new IllegalArgumentException(at + ".mechanisms: use SCRAM-SHA-256 and/or SCRAM-SHA-1")));
            }
            char[] password = d.getString("password").getValue().toCharArray();
            try {
                for (ScramMechanism m : mechanisms) {
                    credentials.put(m, ScramCredential.derive(m, name.user(), password, m.defaultIterations()));
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(at + ".password: SASLprep refuses a character of it; choose another password");
            } finally {
                Arrays.fill(password, '\0');
            }
        } else if (d.get("credentials") instanceof BsonDocument creds) {
            credentials.putAll(ArchiveUsers.credentials(creds, at + ".credentials"));
        } else if (!name.db().equals(UserName.EXTERNAL)) {
            throw new IllegalArgumentException(at + " (" + name + "): give a password or the credentials usersInfo shows");
        }
        List<RoleName> roles = new ArrayList<>();
        for (BsonValue r : d.getArray("roles", new BsonArray())) {
            RoleName role = RoleName.from(r, name.db());
            if (!graph.exists(role)) {
                throw new IllegalArgumentException(at + ".roles: " + role + " is neither a built-in role nor defined under roles");
            }
            roles.add(role);
        }
        return new StoredUser(name, credentials, roles, graph.privileges(roles));
    }
}
