package io.thermocline.security.authentication;

import io.thermocline.security.scram.ScramCredential;
import io.thermocline.security.UserName;
import io.thermocline.security.roles.Privileges;
import io.thermocline.security.roles.RoleName;
import io.thermocline.security.scram.ScramMechanism;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A user as a credential source knows it: the SCRAM credentials it can log in with and the
 * privileges its roles grant (already resolved through role inheritance).
 */
public record StoredUser(UserName name, Map<ScramMechanism, ScramCredential> credentials, List<RoleName> roles,
                         Privileges privileges) {
    public StoredUser {
        credentials = credentials.isEmpty() ? Map.of() : new EnumMap<>(credentials);
        roles = List.copyOf(roles);
    }

    public Optional<ScramCredential> credential(ScramMechanism mechanism) {
        return Optional.ofNullable(credentials.get(mechanism));
    }

    /** Mechanisms in the order a client should prefer them (SHA-256 first), as {@code saslSupportedMechs} lists them. */
    public List<ScramMechanism> mechanisms() {
        return credentials.keySet().stream().sorted((a, b) -> b.compareTo(a)).toList();
    }

    @Override
    public String toString() {
        return "StoredUser[" + name + ", mechanisms=" + credentials.keySet() + ", roles=" + roles + "]";
    }
}
