package io.thermocline.proxy.tiered.writes;

import com.mongodb.reactivestreams.client.MongoCollection;
import io.thermocline.proxy.tiered.exchange.Replies;
import io.thermocline.proxy.tiered.exchange.TierLagging;
import io.thermocline.tiering.metadata.MetadataStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDateTime;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Which statements of a retryable update or findAndModify the fast tier ran itself, and which the proxy
 * owns. An attempt forwarded as sent is deduplicated by the fast tier's own session record (its lsid and
 * txnNumber); an attempt the proxy carries out (a guarded transaction under a session of its own) is
 * recorded in {@link RetryableReplies}. Between the two, before a guarded attempt runs, the proxy
 * <em>claims</em> the statements on the fast tier: one retryable upsert per statement of
 * {@code thermocline.retryClaims}, sent with the client's lsid and txnNumber (so statement ids
 * 0..n-1, as a driver's command has them). The fast tier's session machinery decides, atomically and
 * in order with the client's own attempts (a session is checked out by one command at a time):
 * <ul>
 *   <li>a statement the fast tier already executed for this txnNumber is answered from its history
 *       without running: no claim key among the upserted ids, so the proxy forwards the client's command
 *       as sent and the fast tier answers the retry with the first attempt's result;</li>
 *   <li>otherwise the upsert runs and the statement id is taken: a forwarded attempt arriving later (a
 *       first attempt still in flight, another replica's) is answered from the claim and runs nothing;
 *       the proxy sees the claim key in that reply and takes the guarded path, whose record keeps it to
 *       one execution. A claim answers the same again on a later claim (a retry after a proxy restart).</li>
 * </ul>
 * Claims expire with the logical session timeout (TTL on {@code at}), as the records do.
 */
final class RetryClaims {

    static final String COLLECTION = "retryClaims";
    /** The field that marks an {@code _id} as a claim (an upserted id in a reply). */
    static final String KEY = "thermoclineClaim";
    /** findAndModify retried over a statement the fast tier logged as an insert (our claim) when the command is no upsert. */
    static final int FIND_AND_MODIFY_RETRY_OVER_INSERT = 40608;

    private final MetadataStore store;
    private final MongoCollection<BsonDocument> claims;
    private volatile boolean ensured;

    RetryClaims(MetadataStore store) {
        this.store = store;
        this.claims = store.collection(COLLECTION);
    }

    /** Per statement of the client's command: whether the proxy owns it (true) or the fast tier ran it (false). */
    record Claimed(List<Boolean> byProxy, RawBsonDocument reply) {
        boolean refused() {
            return !Replies.isOk(reply);
        }

        boolean all() {
            return !byProxy.contains(false);
        }

        boolean none() {
            return !byProxy.contains(true);
        }
    }

    /** Claims statements 0..statements-1 of this retryable write on the fast tier (see the class comment). */
    Claimed claim(WriteRequest x, int statements) {
        ensure();
        BsonArray updates = new BsonArray();
        BsonDateTime now = new BsonDateTime(new Date().getTime());
        for (int i = 0; i < statements; i++) {
            updates.add(new BsonDocument("q", new BsonDocument("_id", key(x, i)))
                    .append(
                            "u",
                            new BsonDocument("$inc", new BsonDocument("claims", new BsonInt32(1)))
                                    .append("$setOnInsert", new BsonDocument("at", now)))
                    .append("upsert", BsonBoolean.TRUE));
        }
        BsonDocument body = new BsonDocument("update", new BsonString(COLLECTION))
                .append("updates", updates)
                .append("ordered", BsonBoolean.FALSE)
                .append("lsid", x.traits().lsid())
                .append("txnNumber", new BsonInt64(x.traits().txnNumber()))
                .append("writeConcern", new BsonDocument("w", new BsonString("majority")))
                .append("$db", new BsonString(MetadataStore.DATABASE));
        RawBsonDocument reply = x.fastTier().send(body);
        if (Replies.isOk(reply) && reply.containsKey("writeConcernError")) {
            // a claim a failover may roll back proves nothing: the retry comes again
            throw new TierLagging("the fast tier did not replicate this retryable write's claim in time; retry");
        }
        return new Claimed(Replies.isOk(reply) ? claimedIn(reply, statements) : List.of(), reply);
    }

    /**
     * Per statement, whether a write reply (to a claim, or to a forwarded attempt) answers it with a claim:
     * an {@code upserted} entry at its index whose id is a claim key, or, for a findAndModify, a
     * {@code lastErrorObject.upserted} claim key or the fast tier's refusal to retry it over the claim's insert.
     */
    static List<Boolean> claimedIn(BsonDocument reply, int statements) {
        List<Boolean> claimed = new ArrayList<>(Collections.nCopies(statements, false));
        if (reply.isNumber("code")
                && reply.getNumber("code").intValue() == FIND_AND_MODIFY_RETRY_OVER_INSERT
                && statements == 1) {
            claimed.set(0, true);
            return claimed;
        }
        if (reply.isDocument("lastErrorObject")
                && isKey(reply.getDocument("lastErrorObject").get("upserted"))
                && statements == 1) {
            claimed.set(0, true);
            return claimed;
        }
        if (reply.isArray("upserted")) {
            for (BsonValue u : reply.getArray("upserted")) {
                if (u.isDocument()
                        && u.asDocument().isNumber("index")
                        && isKey(u.asDocument().get("_id"))) {
                    int index = u.asDocument().getNumber("index").intValue();
                    if (index >= 0 && index < statements) {
                        claimed.set(index, true);
                    }
                }
            }
        }
        return claimed;
    }

    /**
     * An update reply for the whole command, from {@code base} (a reply in which the fast tier answered the
     * statements {@code byProxy} with their claims: n 1, nModified 0, the claim key upserted, each) and the
     * proxy's reply to those statements alone ({@code proxyRan}, indexes counted among them).
     */
    static BsonDocument combined(BsonDocument base, List<Boolean> byProxy, BsonDocument proxyRan) {
        if (!Replies.isOk(proxyRan)) {
            return proxyRan;
        }
        List<Integer> owned = new ArrayList<>();
        for (int i = 0; i < byProxy.size(); i++) {
            if (byProxy.get(i)) {
                owned.add(i);
            }
        }
        long n = number(base, "n") - owned.size() + number(proxyRan, "n");
        long modified = number(base, "nModified") + number(proxyRan, "nModified");
        BsonArray upserted = new BsonArray();
        if (base.isArray("upserted")) {
            base.getArray("upserted").stream()
                    .filter(u -> !isKey(u.asDocument().get("_id")))
                    .forEach(upserted::add);
        }
        renumbered(proxyRan, "upserted", owned).forEach(upserted::add);
        BsonArray errors = new BsonArray();
        if (base.isArray("writeErrors")) {
            base.getArray("writeErrors").forEach(errors::add);
        }
        renumbered(proxyRan, "writeErrors", owned).forEach(errors::add);
        BsonDocument out =
                new BsonDocument("n", new BsonInt32((int) n)).append("nModified", new BsonInt32((int) modified));
        if (!upserted.isEmpty()) {
            out.append("upserted", sortedByIndex(upserted));
        }
        if (!errors.isEmpty()) {
            out.append("writeErrors", sortedByIndex(errors));
        }
        return out.append("ok", new BsonDouble(1));
    }

    private static List<BsonValue> renumbered(BsonDocument reply, String field, List<Integer> indexes) {
        List<BsonValue> out = new ArrayList<>();
        if (reply.isArray(field)) {
            for (BsonValue v : reply.getArray(field)) {
                BsonDocument copy = v.asDocument().clone();
                copy.put(
                        "index",
                        new BsonInt32(indexes.get(copy.getNumber("index").intValue())));
                out.add(copy);
            }
        }
        return out;
    }

    private static BsonArray sortedByIndex(BsonArray entries) {
        List<BsonValue> sorted = new ArrayList<>(entries);
        sorted.sort((a, b) -> Integer.compare(
                a.asDocument().getNumber("index").intValue(),
                b.asDocument().getNumber("index").intValue()));
        return new BsonArray(sorted);
    }

    private static long number(BsonDocument reply, String field) {
        return reply.isNumber(field) ? reply.getNumber(field).longValue() : 0;
    }

    static boolean isKey(BsonValue id) {
        return id != null && id.isDocument() && id.asDocument().containsKey(KEY);
    }

    /** The claim of statement {@code index}: the session (as the request names it), the txnNumber and the statement. */
    static BsonDocument key(WriteRequest x, int index) {
        BsonDocument lsid = x.traits().lsid();
        return new BsonDocument(KEY, lsid.containsKey("id") ? lsid.get("id") : lsid)
                .append("txnNumber", new BsonInt64(x.traits().txnNumber()))
                .append("statement", new BsonInt32(index));
    }

    private void ensure() {
        if (!ensured) {
            RetryableReplies.expiring(store.database(), claims, COLLECTION);
            ensured = true;
        }
    }
}
