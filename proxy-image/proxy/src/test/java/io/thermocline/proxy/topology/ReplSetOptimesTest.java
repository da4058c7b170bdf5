package io.thermocline.proxy.topology;

import com.mongodb.ServerAddress;
import org.bson.BsonDocument;
import org.bson.BsonTimestamp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ReplSetOptimesTest {

    @Test
    void eachHealthyMemberGivesItsAppliedOptimeAndNothingElseCounts() {
        BsonDocument status = BsonDocument.parse("{set: 'rs0', ok: 1, members: ["
                + "{name: 'a:27017', health: 1, state: 1, optime: {ts: {$timestamp: {t: 100, i: 3}}, t: {$numberLong: '2'}}},"
                + "{name: 'b:27017', health: 1, state: 2, optime: {ts: {$timestamp: {t: 99, i: 1}}, t: {$numberLong: '2'}}},"
                + "{name: 'c:27017', health: 0, state: 8, optime: {ts: {$timestamp: {t: 50, i: 1}}, t: {$numberLong: '1'}}},"
                + "{name: 'd:27017', health: 1, state: 2, optime: {$timestamp: {t: 98, i: 7}}},"
                + "{name: 'e:27017', health: 1, state: 5},"
                + "{health: 1, state: 2, optime: {ts: {$timestamp: {t: 99, i: 1}}}}]}");
        assertThat(ReplSetOptimes.applied(status)).containsExactly(
                java.util.Map.entry(new ServerAddress("a:27017"), new BsonTimestamp(100, 3)),
                java.util.Map.entry(new ServerAddress("b:27017"), new BsonTimestamp(99, 1)),
                java.util.Map.entry(new ServerAddress("d:27017"), new BsonTimestamp(98, 7)));
    }

    @Test
    void aReplyWithoutMembersGivesNone() {
        assertThat(ReplSetOptimes.applied(BsonDocument.parse("{ok: 0, code: 13, errmsg: 'not authorized'}"))).isEmpty();
    }
}
