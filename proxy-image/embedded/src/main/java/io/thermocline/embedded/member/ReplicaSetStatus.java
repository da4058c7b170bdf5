package io.thermocline.embedded.member;

import io.thermocline.embedded.replication.MemberRole;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import io.thermocline.embedded.storage.BsonBridge;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonTimestamp;

/** Answers the informational replica-set commands: replSetGetStatus, replSetGetConfig, buildInfo, getParameter. */
final class ReplicaSetStatus {
    /** The MongoDB version whose replica-set behaviour this implements (wire version 17). */
    static final String VERSION = "6.0.0";

    private ReplicaSetStatus() {}

    static BsonDocument replSetGetStatus(ReplicationCoordinator coordinator, MemberState self) {
        BsonArray members = new BsonArray();
        for (MemberState m : coordinator.members()) {
            MemberRole role = coordinator.role(m);
            BsonTimestamp ts = m.applied().clusterTime();
            BsonDocument member = new BsonDocument("_id", new BsonInt32(m.index()))
                    .append("name", new BsonString(m.host()))
                    .append("health", new BsonDouble(m.alive() ? 1 : 0))
                    .append("state", new BsonInt32(role.code()))
                    .append("stateStr", new BsonString(role.label()))
                    .append("optime", new BsonDocument("ts", ts).append("t", new BsonInt64(coordinator.term())))
                    .append("optimeDate", new BsonDateTime(ts.getTime() * 1000L));
            if (m == self) {
                member.append("self", BsonBoolean.TRUE);
            }
            members.add(member);
        }
        BsonTimestamp majority = coordinator.commitPoint().majorityCommitted().clusterTime();
        return new BsonDocument("set", new BsonString(coordinator.setName()))
                .append("date", new BsonDateTime(System.currentTimeMillis()))
                .append("myState", new BsonInt32(coordinator.role(self).code()))
                .append("term", new BsonInt64(coordinator.term()))
                .append(
                        "optimes",
                        new BsonDocument(
                                        "lastCommittedOpTime",
                                        new BsonDocument("ts", majority).append("t", new BsonInt64(coordinator.term())))
                                .append(
                                        "appliedOpTime",
                                        new BsonDocument("ts", self.applied().clusterTime())
                                                .append("t", new BsonInt64(coordinator.term()))))
                .append("members", members)
                .append("ok", new BsonDouble(1));
    }

    static BsonDocument replSetGetConfig(ReplicationCoordinator coordinator) {
        BsonArray members = new BsonArray();
        for (MemberState m : coordinator.members()) {
            members.add(new BsonDocument("_id", new BsonInt32(m.index()))
                    .append("host", new BsonString(m.host()))
                    .append("priority", new BsonDouble(1))
                    .append("votes", new BsonInt32(1)));
        }
        return new BsonDocument(
                        "config",
                        new BsonDocument("_id", new BsonString(coordinator.setName()))
                                .append("version", new BsonInt32(1))
                                .append("term", new BsonInt64(coordinator.term()))
                                .append("members", members))
                .append("ok", new BsonDouble(1));
    }

    static BsonDocument buildInfo() {
        return new BsonDocument("version", new BsonString(VERSION))
                .append("gitVersion", new BsonString("thermocline-embedded"))
                .append(
                        "versionArray",
                        new BsonArray(List.of(new BsonInt32(6), new BsonInt32(0), new BsonInt32(0), new BsonInt32(0))))
                .append("bits", new BsonInt32(64))
                .append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024))
                .append("ok", new BsonDouble(1));
    }

    static BsonDocument getParameter(BsonDocument command) {
        BsonDocument reply = new BsonDocument();
        if (command.containsKey("featureCompatibilityVersion")) {
            reply.append("featureCompatibilityVersion", new BsonDocument("version", new BsonString("6.0")));
        }
        return reply.append("ok", new BsonDouble(1));
    }

    /** The storage engine's serverStatus, with this set's version and a repl section as mongod reports it. */
    static BsonDocument serverStatus(BsonDocument engineStatus, ReplicationCoordinator coordinator, MemberState self) {
        BsonDocument status = BsonBridge.mutable(engineStatus);
        status.put("version", new BsonString(VERSION));
        BsonArray hosts = new BsonArray();
        coordinator.members().forEach(m -> hosts.add(new BsonString(m.host())));
        BsonDocument repl = new BsonDocument("setName", new BsonString(coordinator.setName()))
                .append("isWritablePrimary", BsonBoolean.valueOf(coordinator.isPrimary(self)))
                .append("secondary", BsonBoolean.valueOf(!coordinator.isPrimary(self)))
                .append("hosts", hosts)
                .append("me", new BsonString(self.host()));
        coordinator.primary().ifPresent(p -> repl.append("primary", new BsonString(p.host())));
        status.put("repl", repl);
        return status;
    }
}
