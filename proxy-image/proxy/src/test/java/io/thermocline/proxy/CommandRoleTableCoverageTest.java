package io.thermocline.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.auth.CommandPrivileges;
import io.thermocline.proxy.routing.CommandClassifier;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every command the proxy names (those it answers, merges over the tiers, forwards to the archive or routes by content,
 * {@link CommandClassifier#commands}, and those its authorization has a rule for, {@link CommandPrivileges#commands})
 * has a row in the command x role table that {@link CommandRoleWireTest} runs through the proxy: a command added
 * without a row fails here.
 */
@Timeout(10)
class CommandRoleTableCoverageTest {

    @Test
    void everyCommandTheProxyNamesHasARowInTheRoleTable() {
        Set<String> named = new TreeSet<>();
        CommandClassifier.commands().forEach(c -> named.add(c.toLowerCase()));
        named.addAll(CommandPrivileges.commands());
        Set<String> withoutRow = new TreeSet<>(named);
        withoutRow.removeAll(CommandRoleRows.load().commandNames());
        assertThat(withoutRow)
                .as("commands the proxy names without a row in " + CommandRoleRows.RESOURCE)
                .isEmpty();
    }

    @Test
    void everyDifferenceFromMongodSaysWhy() {
        for (CommandRoleRows.Row row : CommandRoleRows.load().rows()) {
            assertThat(row.differs() || row.proxy().equals(row.mongod()))
                    .as(row.toString())
                    .isTrue();
            if (row.differs()) {
                assertThat(row.proxy())
                        .as(row + ": a recorded difference that is none")
                        .isNotEqualTo(row.mongod());
            }
        }
    }
}
