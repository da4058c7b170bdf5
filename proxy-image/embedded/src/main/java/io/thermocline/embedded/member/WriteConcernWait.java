package io.thermocline.embedded.member;

import io.thermocline.embedded.oplog.OplogPosition;
import io.thermocline.embedded.replication.MemberState;
import io.thermocline.embedded.replication.ReplicationCoordinator;
import java.time.Duration;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A write's acknowledgement as its write concern asks (w: majority, a number of members, a tag; wtimeout; the set's
 * default when none is given), answered as mongod does: a concern not met leaves the write standing and says so.
 */
final class WriteConcernWait {
    private final ReplicationCoordinator coordinator;
    private final MemberState self;
    private final boolean majorityByDefault;

    WriteConcernWait(ReplicationCoordinator coordinator, MemberState self, boolean majorityByDefault) {
        this.coordinator = coordinator;
        this.self = self;
        this.majorityByDefault = majorityByDefault;
    }

    /**
     * Waits until the write at {@code position} meets the command's write concern; one not met is a
     * writeConcernError in {@code reply}.
     */
    void await(BsonDocument command, OplogPosition position, BsonDocument reply) {
        coordinator.durability().awaitDurable(); // acknowledged only once on disk (j: true)
        BsonValue wc = command.get("writeConcern");
        BsonValue w = wc != null && wc.isDocument() ? wc.asDocument().get("w") : null;
        Duration timeout = wc != null
                        && wc.isDocument()
                        && wc.asDocument().isNumber("wtimeout")
                        && wc.asDocument().getNumber("wtimeout").longValue() > 0
                ? Duration.ofMillis(wc.asDocument().getNumber("wtimeout").longValue())
                : Duration.ofDays(1);
        boolean satisfied;
        if (w == null) {
            satisfied = !majorityByDefault || coordinator.waits().awaitMajority(self, position, timeout);
        } else if (w.isString() && "majority".equals(w.asString().getValue())) {
            satisfied = coordinator.waits().awaitMajority(self, position, timeout);
        } else if (w.isNumber() && w.asNumber().intValue() > 1) {
            int count = w.asNumber().intValue();
            if (count > coordinator.members().size()) {
                // as mongod: the write stands, and its reply says the write concern cannot be met (ok 1)
                reply.put(
                        "writeConcernError",
                        new BsonDocument("code", new BsonInt32(100))
                                .append("codeName", new BsonString("UnsatisfiableWriteConcern"))
                                .append("errmsg", new BsonString("Not enough data-bearing nodes"))
                                .append("errInfo", new BsonDocument("writeConcern", clientSupplied(wc.asDocument()))));
                return;
            }
            satisfied = coordinator.waits().awaitAcknowledged(self, position, count, timeout);
        } else if (w.isString()) {
            // as mongod: the set defines no tags (settings.getLastErrorModes), so the write stands and its reply says
            // so
            reply.put(
                    "writeConcernError",
                    new BsonDocument("code", new BsonInt32(79))
                            .append("codeName", new BsonString("UnknownReplWriteConcern"))
                            .append(
                                    "errmsg",
                                    new BsonString("No write concern mode named '"
                                            + w.asString().getValue() + "' found in replica set configuration"))
                            .append("errInfo", new BsonDocument("writeConcern", clientSupplied(wc.asDocument()))));
            return;
        } else {
            satisfied = true;
        }
        if (!satisfied) {
            reply.put(
                    "writeConcernError",
                    new BsonDocument("code", new BsonInt32(64))
                            .append("codeName", new BsonString("WriteConcernFailed"))
                            .append("errmsg", new BsonString("waiting for replication timed out"))
                            .append(
                                    "errInfo",
                                    new BsonDocument("wtimeout", BsonBoolean.TRUE)
                                            .append(
                                                    "writeConcern",
                                                    wc != null && wc.isDocument()
                                                            ? clientSupplied(wc.asDocument())
                                                            : new BsonDocument("w", new BsonString("majority"))
                                                                    .append("wtimeout", new BsonInt32(0))
                                                                    .append(
                                                                            "provenance",
                                                                            new BsonString("implicitDefault")))));
        }
    }

    /** The write concern as mongod echoes it in {@code errInfo}: w, wtimeout (0 when absent), j if given, its provenance. */
    private static BsonDocument clientSupplied(BsonDocument wc) {
        BsonDocument echoed = new BsonDocument("w", wc.containsKey("w") ? wc.get("w") : new BsonInt32(1))
                .append(
                        "wtimeout",
                        wc.isNumber("wtimeout")
                                ? new BsonInt32(wc.getNumber("wtimeout").intValue())
                                : new BsonInt32(0));
        if (wc.containsKey("j")) {
            echoed.append("j", wc.get("j"));
        }
        return echoed.append("provenance", new BsonString("clientSupplied"));
    }
}
