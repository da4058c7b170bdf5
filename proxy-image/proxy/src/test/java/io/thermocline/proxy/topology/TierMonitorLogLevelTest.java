package io.thermocline.proxy.topology;

import static org.assertj.core.api.Assertions.assertThat;

import com.mongodb.ServerAddress;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/** A member the proxy cannot reach is a WARN (an operator's pipeline alerts on it); other changes stay INFO. */
class TierMonitorLogLevelTest {

    @Test
    void anUnreachableMemberIsLoggedAtWarn() {
        ServerAddress a = new ServerAddress("127.0.0.1", 1);
        assertThat(TierMonitor.changeLevel(MemberDescription.unknown(a, "Connection refused"))).isEqualTo(Level.WARN);
        assertThat(TierMonitor.changeLevel(MemberDescription.unknown(a, "reports a stale election"))).isEqualTo(Level.WARN);
        assertThat(TierMonitor.changeLevel(MemberDescription.unknown(a, null))).isEqualTo(Level.INFO);
    }
}
