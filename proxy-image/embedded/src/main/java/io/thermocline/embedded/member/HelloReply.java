package io.thermocline.embedded.member;

import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import java.nio.ByteBuffer;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonTimestamp;
import org.bson.BsonValue;
import org.bson.types.ObjectId;

/** A member's answer to hello / isMaster, as a replica-set member of MongoDB 6.0 gives it. */
final class HelloReply {
    /** MongoDB 6.0: what this set implements (sessions, transactions, change streams, OP_MSG). */
    static final int MAX_WIRE_VERSION = 17;

    static final List<String> COMPRESSORS = List.of("snappy", "zstd", "zlib");

    private HelloReply() {}

    static BsonDocument build(
            ReplicationCoordinator coordinator,
            MemberState self,
            BsonDocument request,
            boolean legacy,
            int connectionId) {
        boolean primary = coordinator.isPrimary(self);
        BsonDocument reply = new BsonDocument();
        if (request.getBoolean("helloOk", BsonBoolean.FALSE).getValue()) {
            reply.append("helloOk", BsonBoolean.TRUE);
        }
        reply.append("topologyVersion", topologyVersion(self));
        reply.append(legacy ? "ismaster" : "isWritablePrimary", BsonBoolean.valueOf(primary));
        BsonArray hosts = new BsonArray();
        for (MemberState m : coordinator.members()) {
            hosts.add(new BsonString(m.host()));
        }
        reply.append("hosts", hosts);
        reply.append("setName", new BsonString(coordinator.setName()));
        reply.append("setVersion", new BsonInt32(1));
        reply.append("secondary", BsonBoolean.valueOf(!primary));
        coordinator.primary().ifPresent(p -> reply.append("primary", new BsonString(p.host())));
        reply.append("me", new BsonString(self.host()));
        if (primary) {
            reply.append("electionId", new BsonObjectId(electionId(coordinator.term())));
        }
        BsonTimestamp applied = self.applied().clusterTime();
        BsonTimestamp majority = coordinator.commitPoint().majorityCommitted().clusterTime();
        reply.append(
                "lastWrite",
                new BsonDocument()
                        .append(
                                "opTime",
                                new BsonDocument("ts", applied).append("t", new BsonInt64(coordinator.term())))
                        .append(
                                "lastWriteDate",
                                new BsonDateTime(Math.max(self.appliedWallMillis(), applied.getTime() * 1000L)))
                        .append(
                                "majorityOpTime",
                                new BsonDocument("ts", majority).append("t", new BsonInt64(coordinator.term())))
                        .append("majorityWriteDate", new BsonDateTime(majority.getTime() * 1000L)));
        reply.append("maxBsonObjectSize", new BsonInt32(16 * 1024 * 1024));
        reply.append("maxMessageSizeBytes", new BsonInt32(48_000_000));
        reply.append("maxWriteBatchSize", new BsonInt32(100_000));
        reply.append("localTime", new BsonDateTime(System.currentTimeMillis()));
        reply.append("logicalSessionTimeoutMinutes", new BsonInt32(30));
        reply.append("connectionId", new BsonInt32(connectionId));
        reply.append("minWireVersion", new BsonInt32(0));
        reply.append("maxWireVersion", new BsonInt32(MAX_WIRE_VERSION));
        reply.append("readOnly", BsonBoolean.FALSE);
        BsonValue requested = request.get("compression");
        if (requested != null && requested.isArray()) {
            BsonArray agreed = new BsonArray();
            for (BsonValue name : requested.asArray()) {
                if (name.isString() && COMPRESSORS.contains(name.asString().getValue())) {
                    agreed.add(name);
                }
            }
            reply.append("compression", agreed);
        }
        reply.append("ok", new BsonDouble(1));
        return reply;
    }

    static BsonDocument topologyVersion(MemberState self) {
        return new BsonDocument("processId", new BsonObjectId(self.processId()))
                .append("counter", new BsonInt64(self.topologyCounter()));
    }

    /** Real servers encode the term in the electionId, so a newer primary always has a larger one. */
    static ObjectId electionId(long term) {
        ByteBuffer bytes = ByteBuffer.allocate(12);
        bytes.putInt(0x7fffffff);
        bytes.putLong(term);
        return new ObjectId(bytes.array());
    }
}
