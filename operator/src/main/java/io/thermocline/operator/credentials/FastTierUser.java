package io.thermocline.operator.credentials;

import java.util.List;

/**
 * A user the operator keeps on the fast tier: built-in roles and, when {@code actions} is not empty,
 * a custom role of the same name (in {@code admin}) granting those actions on the tiered namespaces only.
 *
 * @param secret     the Secret its password comes from (named in messages; never the password itself)
 * @param password   null while that Secret does not exist yet
 * @param roles      built-in roles, each {@code role@db}
 * @param namespaces {@code db.collection} of every tiered collection, the custom role's resources
 */
public record FastTierUser(
        String name,
        String password,
        String secret,
        List<String> roles,
        List<String> actions,
        List<String> namespaces) {

    public FastTierUser {
        roles = List.copyOf(roles);
        actions = List.copyOf(actions);
        namespaces = List.copyOf(namespaces);
    }

    /** Its own custom role (named as the user), or none. */
    public boolean hasCustomRole() {
        return !actions.isEmpty();
    }

    @Override
    public String toString() {
        return "FastTierUser[" + name + ", roles=" + roles + ", actions=" + actions + " on " + namespaces
                + ", password=***]";
    }
}
