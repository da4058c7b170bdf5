package io.thermocline.embedded.contract;

import io.thermocline.embedded.EmbeddedReplicaSet;

/** The change-stream contract on a three-member embedded replica set. */
class EmbeddedChangeStreamTest extends ChangeStreamContract {
    private EmbeddedReplicaSet rs;

    @Override
    protected String startDeployment() {
        rs = EmbeddedReplicaSet.builder().name("cs").members(3).build().start();
        return rs.connectionString();
    }

    @Override
    protected void stopDeployment() {
        if (rs != null) {
            rs.close();
        }
    }
}
