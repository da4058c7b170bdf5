package io.thermocline.tiering.mode;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.config.Mode;
import io.thermocline.tiering.OnTwoTiers;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Who asks for a mode: a process restarting with a config that names no {@code mode:} (the operator
 * renders none) must not undo the operator's or the CLI's request; a config that names one asks once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ModeRequestsTest extends OnTwoTiers {
    private ModeStore modes;

    @BeforeEach
    void start() {
        modes = new ModeStore(tiers.store);
    }

    @Test
    void aRestartWithTheDefaultConfigKeepsTheOperatorsRequest() {
        modes.request(Mode.SHADOW, false, "operator");
        modes.requestFromConfig(Mode.TIERED);
        assertThat(modes.read().requested()).isEqualTo(Mode.SHADOW);
        assertThat(modes.read().requestedBy()).isEqualTo("operator");
    }

    @Test
    void aConfigNamingAModeAsksOnceAndARestartDoesNotAskAgain() {
        modes.requestFromConfig(Mode.SHADOW);
        assertThat(modes.read().requested()).isEqualTo(Mode.SHADOW);
        modes.request(Mode.TIERED, false, "cli");
        modes.requestFromConfig(Mode.SHADOW);
        assertThat(modes.read().requested())
                .as("a restart keeps the later CLI request")
                .isEqualTo(Mode.TIERED);
        modes.requestFromConfig(Mode.DRAINING);
        assertThat(modes.read().requested()).as("a changed config asks again").isEqualTo(Mode.DRAINING);
    }
}
