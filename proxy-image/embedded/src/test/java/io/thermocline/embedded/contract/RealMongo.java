package io.thermocline.embedded.contract;

import org.testcontainers.containers.MongoDBContainer;
import org.testcontainers.utility.DockerImageName;

/** A real MongoDB 7 replica set (single member, as Testcontainers starts it) for the e2e twins. */
final class RealMongo {
    private RealMongo() {
    }

    static MongoDBContainer start() {
        MongoDBContainer container = new MongoDBContainer(DockerImageName.parse("mongo:7"));
        container.start();
        return container;
    }

    static String connectionString(MongoDBContainer container) {
        return container.getReplicaSetUrl("test").replace("/test", "/?directConnection=true");
    }
}
