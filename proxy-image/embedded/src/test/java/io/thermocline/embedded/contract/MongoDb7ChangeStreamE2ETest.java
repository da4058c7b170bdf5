package io.thermocline.embedded.contract;

import org.junit.jupiter.api.Tag;
import org.testcontainers.containers.MongoDBContainer;
import org.testcontainers.junit.jupiter.Testcontainers;

/** The same contract against a real mongo:7 replica set; skipped where no Docker engine runs. */
@Tag("e2e")
@Testcontainers(disabledWithoutDocker = true)
class MongoDb7ChangeStreamE2ETest extends ChangeStreamContract {
    private MongoDBContainer mongo;

    @Override
    protected String startDeployment() {
        mongo = RealMongo.start();
        return RealMongo.connectionString(mongo);
    }

    @Override
    protected void stopDeployment() {
        if (mongo != null) {
            mongo.stop();
        }
    }
}
