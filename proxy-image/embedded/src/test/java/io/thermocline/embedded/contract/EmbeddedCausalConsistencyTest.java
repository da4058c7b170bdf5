package io.thermocline.embedded.contract;

import io.thermocline.embedded.EmbeddedReplicaSet;
import java.time.Duration;

/** The causal-consistency contract on a three-member embedded set whose secondaries lag 300 ms. */
class EmbeddedCausalConsistencyTest extends CausalConsistencyContract {
    private EmbeddedReplicaSet rs;

    @Override
    protected String startDeployment() {
        rs = EmbeddedReplicaSet.builder().name("causal").members(3).replicationLag(Duration.ofMillis(300)).build().start();
        return rs.connectionString();
    }

    @Override
    protected void stopDeployment() {
        if (rs != null) {
            rs.close();
        }
    }
}
