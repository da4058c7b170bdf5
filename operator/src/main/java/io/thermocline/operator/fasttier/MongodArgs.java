package io.thermocline.operator.fasttier;

import io.thermocline.operator.api.v1alpha1.FastTierSpec;
import java.util.List;
import java.util.stream.Collectors;

/**
 * {@code fastTier.mongodArgs} on mongod's command line. The member starts through {@code sh -c} (it drops the root user's
 * variables on all but member 0), so each option is single-quoted: passed to mongod as one word, never read by the shell.
 */
public final class MongodArgs {

    private MongodArgs() {
    }

    /** {@code " 'a' 'b'"}: appended to the mongod command; empty for none. */
    public static String shellWords(List<String> args) {
        if (args == null || args.isEmpty()) {
            return "";
        }
        return args.stream().map(a -> "'" + a.replace("'", "'\\''") + "'").collect(Collectors.joining(" ", " ", ""));
    }

    /** The options the CRD refuses (for an API server that does not run its rules); empty when all is well. */
    public static List<String> problems(List<String> args) {
        if (args == null) {
            return List.of();
        }
        return args.stream().filter(a -> a != null && a.matches(FastTierSpec.MONGOD_ARGS_OWNED))
                .map(a -> "fastTier.mongodArgs holds " + a + ", which the operator sets itself; remove it").toList();
    }
}
