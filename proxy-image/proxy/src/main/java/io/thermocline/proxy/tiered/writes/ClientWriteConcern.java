package io.thermocline.proxy.tiered.writes;

import com.mongodb.WriteConcern;
import com.mongodb.bulk.WriteConcernError;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The client's {@code writeConcern} applied to a transaction the proxy commits for its write (a guarded
 * write, a delete): the commit waits as the client asked (w, j, wtimeout), and a write concern the commit
 * did not meet reaches the client as mongod reports it, the write standing ({@code writeConcernError}
 * next to the write's own result, ok 1). The proxy's own floor is {@code w: "majority"}: a weaker request
 * (none, w 0, w 1) still commits with it, which no client can tell from its own but by latency, and an
 * unacknowledged write ({@code w: 0}) is executed all the same (transactions have no unacknowledged commit).
 */
record ClientWriteConcern(WriteConcern commit) {

    static final ClientWriteConcern PROXY_DEFAULT = new ClientWriteConcern(WriteConcern.MAJORITY);

    /** The write concern to commit {@code command}'s transaction with. */
    static ClientWriteConcern of(BsonDocument command) {
        BsonValue value = command.get("writeConcern");
        if (value == null || !value.isDocument()) {
            return PROXY_DEFAULT;
        }
        BsonDocument wc = value.asDocument();
        BsonValue w = wc.get("w");
        WriteConcern commit;
        if (w != null && w.isString()) {
            commit = new WriteConcern(w.asString().getValue());
        } else if (w != null && w.isNumber() && w.asNumber().intValue() > 1) {
            commit = new WriteConcern(w.asNumber().intValue());
        } else {
            commit = WriteConcern.MAJORITY; // the floor (see above); the client's wtimeout was for a weaker wait
            return wc.isBoolean("j") ? new ClientWriteConcern(commit.withJournal(wc.getBoolean("j").getValue())) : PROXY_DEFAULT;
        }
        if (wc.isNumber("wtimeout") && wc.getNumber("wtimeout").longValue() > 0) {
            commit = commit.withWTimeout(wc.getNumber("wtimeout").longValue(), TimeUnit.MILLISECONDS);
        }
        if (wc.isBoolean("j")) {
            commit = commit.withJournal(wc.getBoolean("j").getValue());
        }
        return new ClientWriteConcern(commit);
    }

    /** {@code reply} (a write's result) with the commit's unmet write concern, in the shape mongod replies it. */
    static BsonDocument withError(BsonDocument reply, WriteConcernError error) {
        BsonDocument wce = new BsonDocument("code", new BsonInt32(error.getCode()));
        if (error.getCodeName() != null && !error.getCodeName().isEmpty()) {
            wce.append("codeName", new BsonString(error.getCodeName()));
        }
        wce.append("errmsg", new BsonString(error.getMessage()));
        if (error.getDetails() != null && !error.getDetails().isEmpty()) {
            wce.append("errInfo", error.getDetails());
        }
        return withError(reply, wce);
    }

    /** {@code reply} with {@code writeConcernError} (none when null) placed before {@code ok}, as mongod orders it. */
    static BsonDocument withError(BsonDocument reply, BsonDocument writeConcernError) {
        if (writeConcernError == null) {
            return reply;
        }
        BsonDocument out = new BsonDocument();
        reply.forEach((k, v) -> {
            if (k.equals("ok")) {
                out.append("writeConcernError", writeConcernError);
            }
            if (!k.equals("writeConcernError")) {
                out.append(k, v);
            }
        });
        if (!out.containsKey("writeConcernError")) {
            out.append("writeConcernError", writeConcernError);
        }
        return out;
    }

    /** The {@code writeConcernError} of a reply, or {@code kept} when it has none (a write run as several transactions reports one). */
    static BsonDocument errorOf(BsonDocument reply, BsonDocument kept) {
        return reply.isDocument("writeConcernError") ? reply.getDocument("writeConcernError") : kept;
    }
}
