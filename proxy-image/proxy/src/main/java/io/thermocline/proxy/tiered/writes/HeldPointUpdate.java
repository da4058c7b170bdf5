package io.thermocline.proxy.tiered.writes;

import io.thermocline.proxy.tiered.exchange.Replies;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The cheap case of a guarded write: one update statement whose filter is only {@code _id} equality.
 * Such an update matches exactly the document with that {@code _id} or nothing, so its own reply
 * says whether the fast tier held the document when it ran ({@code n: 1} and nothing upserted). Run
 * first in the guarded transaction, it needs none of the checks around it (fences, presence before
 * and after, the write lock): most updates of recent data find their document held. When the reply
 * does not prove it, the transaction is aborted, so nothing of it stands, and the write takes the
 * checked path.
 */
final class HeldPointUpdate {

    private HeldPointUpdate() {}

    /** Whether {@code command} (the guarded update, session fields removed) over {@code ids} is one such update. */
    static boolean applies(BsonDocument command, List<BsonValue> ids) {
        if (!command.isArray("updates") || ids.size() != 1) {
            return false;
        }
        BsonArray statements = command.getArray("updates");
        if (statements.size() != 1 || !statements.get(0).isDocument()) {
            return false;
        }
        BsonDocument statement = statements.get(0).asDocument();
        // a collation can make a string _id match another spelling: only the simple one proves which document matched
        if (statement.containsKey("collation") && !isSimple(statement.get("collation"))) {
            return false;
        }
        BsonValue q = statement.get("q");
        if (q == null || !q.isDocument() || q.asDocument().size() != 1) {
            return false;
        }
        BsonValue id = q.asDocument().get("_id");
        return id != null && id.equals(ids.get(0)) && !isOperatorDocument(id);
    }

    /** Whether the update's reply proves it changed (or matched) an existing document: n 1, nothing upserted, no error. */
    static boolean proved(BsonDocument reply) {
        return Replies.isOk(reply)
                && !reply.containsKey("writeErrors")
                && !reply.containsKey("writeConcernError")
                && !reply.containsKey("upserted")
                && reply.isNumber("n")
                && reply.getNumber("n").intValue() == 1;
    }

    private static boolean isOperatorDocument(BsonValue value) {
        return value.isDocument()
                && !value.asDocument().isEmpty()
                && value.asDocument().getFirstKey().startsWith("$");
    }

    private static boolean isSimple(BsonValue collation) {
        return collation.isDocument()
                && new BsonString("simple").equals(collation.asDocument().get("locale"));
    }
}
