package io.thermocline.proxy.server;

import io.thermocline.proxy.session.SessionKey;
import org.bson.BsonBinaryReader;
import org.bson.BsonDocument;
import org.bson.BsonType;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonValueCodec;
import org.bson.codecs.DecoderContext;

import java.util.Optional;
import java.util.Set;

/**
 * What the proxy needs to know about a client command to route it and to label its errors,
 * read in one pass over the command's top level (the payload is skipped, never decoded).
 *
 * @param txnNumber       the command's txnNumber, or null
 * @param inTransaction   part of a multi-statement transaction ({@code autocommit: false})
 * @param lsid            the client's session id document, or null
 * @param readPreference  the command's {@code $readPreference}, or null
 */
public record CommandTraits(String name, Long txnNumber, boolean inTransaction, boolean startsTransaction,
                            BsonDocument lsid, BsonValue readPreference, boolean noCursorTimeout) {
    private static final BsonValueCodec VALUES = new BsonValueCodec();
    private static final DecoderContext DECODING = DecoderContext.builder().build();
    private static final Set<String> RETRYABLE_WRITES = Set.of("insert", "update", "delete", "findAndModify", "bulkWrite");

    public static CommandTraits of(String name, BsonDocument body) {
        if (!(body instanceof RawBsonDocument raw)) {
            return fromValues(name, body.get("txnNumber"), body.get("autocommit"), body.get("startTransaction"),
                    body.get("lsid"), body.get("$readPreference"), body.get("noCursorTimeout"));
        }
        BsonValue txn = null;
        BsonValue autocommit = null;
        BsonValue start = null;
        BsonValue lsid = null;
        BsonValue readPreference = null;
        BsonValue noTimeout = null;
        try (BsonBinaryReader reader = new BsonBinaryReader(raw.getByteBuffer().asNIO())) {
            reader.readStartDocument();
            while (reader.readBsonType() != BsonType.END_OF_DOCUMENT) {
                String field = reader.readName();
                switch (field) {
                    case "txnNumber" -> txn = value(reader);
                    case "autocommit" -> autocommit = value(reader);
                    case "startTransaction" -> start = value(reader);
                    case "lsid" -> lsid = value(reader);
                    case "$readPreference" -> readPreference = value(reader);
                    case "noCursorTimeout" -> noTimeout = value(reader);
                    default -> reader.skipValue();
                }
            }
        }
        return fromValues(name, txn, autocommit, start, lsid, readPreference, noTimeout);
    }

    private static BsonValue value(BsonBinaryReader reader) {
        return VALUES.decode(reader, DECODING);
    }

    private static CommandTraits fromValues(String name, BsonValue txn, BsonValue autocommit, BsonValue start, BsonValue lsid,
                                            BsonValue readPreference, BsonValue noTimeout) {
        Long txnNumber = txn != null && txn.isNumber() ? txn.asNumber().longValue() : null;
        boolean inTxn = txnNumber != null && autocommit != null && autocommit.isBoolean() && !autocommit.asBoolean().getValue();
        boolean starts = inTxn && start != null && start.isBoolean() && start.asBoolean().getValue();
        return new CommandTraits(name, txnNumber, inTxn, starts, lsid != null && lsid.isDocument() ? lsid.asDocument() : null,
                readPreference, noTimeout != null && noTimeout.isBoolean() && noTimeout.asBoolean().getValue());
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
