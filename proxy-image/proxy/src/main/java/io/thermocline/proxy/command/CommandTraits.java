package io.thermocline.proxy.command;

import io.thermocline.proxy.session.SessionKey;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * What the proxy needs to know about a client command to route it and to label its errors,
 * read in one pass over the command's top level (the payload is skipped, never decoded).
 *
 * @param database        the command's {@code $db}, or null
 * @param txnNumber       the command's txnNumber, or null
 * @param inTransaction   part of a multi-statement transaction ({@code autocommit: false})
 * @param lsid            the client's session id document, or null
 * @param readPreference  the command's {@code $readPreference}, or null
 * @param readConcern     the command's {@code readConcern} (its causal point is {@code afterClusterTime}), or null
 * @param cursorId        the cursor a getMore continues (the value of its first field), or null for other commands
 * @param clientTimeLimit whether the client set its own {@code maxTimeMS}
 */
public record CommandTraits(
        String name,
        String database,
        Long txnNumber,
        boolean inTransaction,
        boolean startsTransaction,
        BsonDocument lsid,
        BsonValue readPreference,
        BsonDocument readConcern,
        boolean noCursorTimeout,
        BsonValue cursorId,
        boolean clientTimeLimit) {
    private static final Set<String> RETRYABLE_WRITES =
            Set.of("insert", "update", "delete", "findAndModify", "bulkWrite");

    /** The traits of a command body; {@code name} is its first key. */
    public static CommandTraits of(String name, BsonDocument body) {
        Fields f = new Fields();
        if (!(body instanceof RawBsonDocument raw)) {
            body.forEach(f::take);
            f.cursorId = name.equals("getMore") ? body.get(name) : null;
            return f.traits(name);
        }
        TopLevelElements elements = new TopLevelElements(raw);
        boolean first = true;
        while (elements.next()) {
            if (first && elements.nameIs("getMore")) {
                f.cursorId = elements.value();
            } else {
                String field = Fields.named(elements);
                if (field != null) {
                    f.take(field, elements.value());
                }
            }
            first = false;
        }
        return f.traits(name);
    }

    /** The fields read on the way through a body. */
    private static final class Fields {
        static final List<String> NAMES = List.of(
                "$db",
                "txnNumber",
                "autocommit",
                "startTransaction",
                "lsid",
                "$readPreference",
                "readConcern",
                "noCursorTimeout",
                "maxTimeMS");
        /** The field of {@link #NAMES} the element is, or null: compared as bytes, no name decoded. */
        static String named(TopLevelElements element) {
            for (String name : NAMES) {
                if (element.nameIs(name)) {
                    return name;
                }
            }
            return null;
        }

        BsonValue db;
        BsonValue txn;
        BsonValue autocommit;
        BsonValue start;
        BsonValue lsid;
        BsonValue readPreference;
        BsonValue readConcern;
        BsonValue noTimeout;
        BsonValue cursorId;
        BsonValue maxTime;

        void take(String field, BsonValue v) {
            switch (field) {
                case "$db" -> db = v;
                case "txnNumber" -> txn = v;
                case "autocommit" -> autocommit = v;
                case "startTransaction" -> start = v;
                case "lsid" -> lsid = v;
                case "$readPreference" -> readPreference = v;
                case "readConcern" -> readConcern = v;
                case "noCursorTimeout" -> noTimeout = v;
                case "maxTimeMS" -> maxTime = v;
                default -> {}
            }
        }

        CommandTraits traits(String name) {
            Long txnNumber = txn != null && txn.isNumber() ? txn.asNumber().longValue() : null;
            boolean inTxn = txnNumber != null
                    && autocommit != null
                    && autocommit.isBoolean()
                    && !autocommit.asBoolean().getValue();
            boolean starts = inTxn
                    && start != null
                    && start.isBoolean()
                    && start.asBoolean().getValue();
            return new CommandTraits(
                    name,
                    db != null && db.isString() ? db.asString().getValue() : null,
                    txnNumber,
                    inTxn,
                    starts,
                    lsid != null && lsid.isDocument() ? lsid.asDocument() : null,
                    readPreference,
                    readConcern != null && readConcern.isDocument() ? readConcern.asDocument() : null,
                    noTimeout != null
                            && noTimeout.isBoolean()
                            && noTimeout.asBoolean().getValue(),
                    cursorId,
                    maxTime != null && maxTime.isNumber() && maxTime.asNumber().longValue() > 0);
        }
    }

    /** These traits with another {@code lsid}: a command whose session was replaced by the backend's, and nothing else. */
    public CommandTraits withLsid(BsonDocument replaced) {
        return new CommandTraits(
                name,
                database,
                txnNumber,
                inTransaction,
                startsTransaction,
                replaced,
                readPreference,
                readConcern,
                noCursorTimeout,
                cursorId,
                clientTimeLimit);
    }

    /** The logical session the command runs in, if it names one. */
    public Optional<SessionKey> session() {
        if (lsid == null) {
            return Optional.empty();
        }
        BsonValue id = lsid.get("id");
        return id == null ? Optional.empty() : Optional.of(new SessionKey(id));
    }

    public boolean retryableWrite() {
        return txnNumber != null && !inTransaction && RETRYABLE_WRITES.contains(name);
    }

    public boolean endsTransaction() {
        return name.equals("commitTransaction") || name.equals("abortTransaction");
    }
}
