package io.thermocline.proxy.command;

import io.thermocline.wire.OpMsg;
import org.bson.BsonDocument;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class CommandEnvelopeTest {

    @Test
    void dropsMongosFieldsReplacesInPlaceAndAppendsLast() {
        RawBsonDocument body = OpMsg.raw(BsonDocument.parse("{getMore: {$numberLong: '77'}, collection: 'c',"
                + " $readPreference: {mode: 'secondary'}, recoveryToken: {x: 1}, $clusterTime: {clusterTime: {$timestamp: {t: 9, i: 9}}},"
                + " lsid: {id: 1}, $db: 'app'}"));
        BsonDocument own = BsonDocument.parse("{clusterTime: {$timestamp: {t: 5, i: 1}}}");
        RawBsonDocument edited = CommandEnvelope.edit(body, Map.of("getMore", new BsonInt64(12)),
                Set.of("$readPreference", "$clusterTime", "recoveryToken"), new BsonDocument("$clusterTime", own));
        assertThat(List.copyOf(edited.keySet())).containsExactly("getMore", "collection", "lsid", "$db", "$clusterTime");
        assertThat(edited.getInt64("getMore").getValue()).isEqualTo(12);
        assertThat(edited.getDocument("$clusterTime")).isEqualTo(own);
        assertThat(edited.getString("$db")).isEqualTo(new BsonString("app"));
    }

    @Test
    void largeValuesAreCopiedUnchanged() {
        String big = "x".repeat(2_000_000);
        RawBsonDocument body = OpMsg.raw(new BsonDocument("insert", new BsonString("c"))
                .append("documents", new org.bson.BsonArray(List.of(new BsonDocument("s", new BsonString(big)))))
                .append("$db", new BsonString("d")));
        RawBsonDocument edited = CommandEnvelope.edit(body, Map.of(), Set.of("$readPreference"), new BsonDocument());
        assertThat(edited).isEqualTo(body);
    }
}
