package io.thermocline.proxy.server.startup;

import static org.assertj.core.api.Assertions.assertThat;

import io.thermocline.proxy.command.CommandTraits;
import java.util.List;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class StartingRepliesTest {

    private static final String SESSION = "lsid: {id: {$binary: {base64: 'AAAAAAAAAAAAAAAAAAAAAA==', subType: '04'}}}";

    /** The labels mongod puts on NotPrimaryOrSecondary, by command (retryable writes and transactions specifications). */
    @ParameterizedTest(name = "{0} -> [{1}]")
    @CsvSource(
            delimiter = '|',
            value = {
                "{find: 'c'}|",
                "{aggregate: 'c', pipeline: []}|",
                "{insert: 'c', documents: []}|",
                "{insert: 'c', documents: [], txnNumber: 1, LSID}|RetryableWriteError",
                "{update: 'c', updates: [], txnNumber: 1, LSID}|RetryableWriteError",
                "{delete: 'c', deletes: [], txnNumber: 1, LSID}|RetryableWriteError",
                "{findAndModify: 'c', txnNumber: 1, LSID}|RetryableWriteError",
                "{insert: 'c', documents: [], txnNumber: 1, autocommit: false, startTransaction: true, LSID}|TransientTransactionError",
                "{find: 'c', txnNumber: 1, autocommit: false, LSID}|TransientTransactionError",
                "{commitTransaction: 1, txnNumber: 1, autocommit: false, LSID}|RetryableWriteError",
                "{abortTransaction: 1, txnNumber: 1, autocommit: false, LSID}|RetryableWriteError",
                "{createIndexes: 'c', indexes: []}|",
            })
    void labelsAsMongodLabelsAStateChangeError(String command, String label) {
        BsonDocument body = BsonDocument.parse(command.replace("LSID", SESSION));
        BsonDocument reply =
                StartingReplies.command(CommandTraits.of(body.getFirstKey(), body), "starting the archive");
        assertThat(reply.getInt32("code").getValue()).isEqualTo(13436);
        assertThat(reply.getString("errmsg").getValue()).contains("starting the archive");
        List<String> labels = reply.containsKey("errorLabels")
                ? reply.getArray("errorLabels").getValues().stream()
                        .map(v -> v.asString().getValue())
                        .toList()
                : List.of();
        assertThat(labels).isEqualTo(label == null ? List.of() : List.of(label));
    }

    @org.junit.jupiter.api.Test
    void helloFailsSoDriversKeepTheServerUnknown() {
        BsonDocument hello = StartingReplies.hello("starting the fast tier");
        assertThat(hello.getNumber("ok").intValue()).isZero();
        assertThat(hello.getInt32("code").getValue()).isEqualTo(13436);
        assertThat(hello.containsKey("isWritablePrimary")).isFalse();
    }
}
