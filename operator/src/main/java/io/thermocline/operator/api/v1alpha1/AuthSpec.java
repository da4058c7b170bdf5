package io.thermocline.operator.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.ValidationRule;
import java.util.ArrayList;
import java.util.List;

/** How the proxy authenticates applications (the data plane's {@code auth} section). */
@ValidationRule(value = "!has(self.users) || !self.users.exists(u, u == 'file') || has(self.usersSecretRef)",
        message = "auth.usersSecretRef is required when auth.users names file")
@ValidationRule(value = "!has(self.users) || self.users.all(u, u == 'archive' || u == 'file')",
        message = "auth.users may only name archive and file")
public class AuthSpec {

    public static final String DEFAULT_USERS_KEY = "users.yaml";

    @Default("required")
    @Pattern("^(required|disabled)$")
    @JsonPropertyDescription("required: every command but the handshake needs a SCRAM login; disabled: clients need not log in.")
    public String mode = "required";

    @JsonPropertyDescription("Where users come from: archive (the archive's own users, read with the archive Secret's user,"
            + " which then needs viewUser and viewRole), file (usersSecretRef), or both (the file is asked when the archive"
            + " has no such user). Default: archive.")
    public List<String> users = new ArrayList<>(List.of("archive"));

    @JsonPropertyDescription("Secret key holding the users file (YAML or JSON; key defaults to 'users.yaml'), mounted into the"
            + " proxy pods only.")
    public SecretKeyRef usersSecretRef;

    public boolean usesArchive() {
        return users != null && users.contains("archive");
    }

    public boolean usesFile() {
        return users != null && users.contains("file");
    }
}
