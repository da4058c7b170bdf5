package io.thermocline.proxy.tiered;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which tiered namespaces a fast-tier change event writes, and the time a resume token carries. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FastTierWriteStreamTest {

    private static final Set<String> TIERED = Set.of("shop.orders", "shop.carts", "crm.leads");

    @ParameterizedTest(name = "{0} {1} to {2} key {3} -> {4}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
            "insert       | shop.orders            | -           | {_id: 1}                              | shop.orders",
            "update       | shop.orders            | -           | {_id: 1}                              | shop.orders",
            "delete       | shop.carts             | -           | {_id: 1}                              | shop.carts",
            "insert       | shop.untiered          | -           | {_id: 1}                              | ''",
            "drop         | shop.orders            | -           | -                                     | shop.orders",
            "rename       | shop.tmp               | shop.orders | -                                     | shop.orders",
            "rename       | shop.orders            | shop.old    | -                                     | shop.orders",
            "dropDatabase | shop                   | -           | -                                     | shop.carts,shop.orders",
            // a user delete of a document only the archive held may write nothing but its fence
            "insert       | thermocline.fences     | -           | {_id: {ns: 'shop.orders', id: 7}}     | shop.orders",
            "update       | thermocline.fences     | -           | {_id: {ns: 'crm.leads', id: 7}}       | crm.leads",
            "insert       | thermocline.fences     | -           | {_id: {ns: 'shop.untiered', id: 7}}   | ''",
            "insert       | thermocline.fences     | -           | {_id: 'unreadable'}                   | crm.leads,shop.carts,shop.orders",
            // a fence expiring changes nothing the feeder mirrors
            "delete       | thermocline.fences     | -           | {_id: {ns: 'shop.orders', id: 7}}     | ''",
            "update       | thermocline.state      | -           | {_id: 'feeder'}                       | ''",
            "insert       | thermocline.probes     | -           | {_id: 'proxy/a'}                      | ''",
    })
    void attributesEachEventToTheTieredNamespacesItChanges(String type, String ns, String to, String key, String expected) {
        List<String> touched = FastTierWriteStream.touched(type, ns, to, key == null ? null : BsonDocument.parse(key), TIERED);
        assertThat(touched.stream().sorted().toList()).isEqualTo(expected.isEmpty() ? List.of() : List.of(expected.split(",")));
    }

    @Test
    void readsTheClusterTimeAResumeTokenStartsWith() {
        // a MongoDB 6.0 event token and a high-water mark, and the embedded replica set's form
        assertThat(ResumeTokens.clusterTime(BsonDocument.parse(
                "{_data: '8263A1B2C3000000012B022C0100296E5A1004B5E3AB2A9F2C4D7E8F1A2B3C4D5E6F7046645F69640064638A1B2C3D4E5F60718293A40004'}")))
                .isEqualTo(new BsonTimestamp(0x63A1B2C3, 1));
        assertThat(ResumeTokens.clusterTime(BsonDocument.parse("{_data: '8263A1B2C30000000A0128000000'}")))
                .isEqualTo(new BsonTimestamp(0x63A1B2C3, 10));
        assertThat(ResumeTokens.clusterTime(BsonDocument.parse("{_data: '82000000010000000200000003' }")))
                .isEqualTo(new BsonTimestamp(1, 2));
        // not a form this proxy can read: unknown, never a guess
        assertThat(ResumeTokens.clusterTime(BsonDocument.parse("{_data: {$binary: {base64: 'AA==', subType: '00'}}}"))).isNull();
        assertThat(ResumeTokens.clusterTime(BsonDocument.parse("{_data: '0163A1B2C300000001'}"))).isNull();
        assertThat(ResumeTokens.clusterTime(BsonDocument.parse("{_data: '8263A1'}"))).isNull();
        assertThat(ResumeTokens.clusterTime(BsonDocument.parse("{other: 1}"))).isNull();
    }
}
