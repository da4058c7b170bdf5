package io.thermocline.proxy.session;

import io.thermocline.security.UserName;
import org.bson.BsonArray;
import org.bson.BsonBinary;
import org.bson.BsonBinarySubType;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

class BackendSessionIdsTest {
    private static final UserName ALICE = new UserName("alice", "admin");
    private static final UserName BOB = new UserName("bob", "admin");

    @Test
    void oneClientIdGivesEachUserItsOwnBackendIdTheSameEveryTime() {
        BsonBinary client = new BsonBinary(UUID.fromString("6f1c5a0e-3b1f-4e8a-9c55-0d2f3c1b7a10"));
        BsonBinary alice = BackendSessionIds.backendId(client, ALICE);
        assertThat(BackendSessionIds.backendId(client, ALICE)).as("every replica, every restart").isEqualTo(alice);
        assertThat(BackendSessionIds.backendId(client, BOB)).isNotEqualTo(alice);
        assertThat(BackendSessionIds.backendId(client, null)).isNotEqualTo(alice).isNotEqualTo(BackendSessionIds.backendId(client, BOB));
        assertThat(BackendSessionIds.backendId(new BsonBinary(UUID.randomUUID()), ALICE)).isNotEqualTo(alice);
        assertThat(alice).isNotEqualTo(client);
        assertThat(alice.getType()).isEqualTo(BsonBinarySubType.UUID_STANDARD.getValue());
        assertThat(alice.getData()).hasSize(16);
        // a user that sends another user's backend id gets a third session, not the other's
        assertThat(BackendSessionIds.backendId(alice, BOB)).isNotEqualTo(alice);
    }

    @Test
    void idsOfAnyTypeAreDerivedNoneIsForwardedAsSent() {
        assertThat(BackendSessionIds.backendId(new BsonInt32(5), ALICE)).isNotEqualTo(BackendSessionIds.backendId(new BsonInt64(5), ALICE))
                .isNotEqualTo(BackendSessionIds.backendId(new BsonInt32(5), BOB));
    }

    @Test
    void listsOfSessionsAreEachDerivedAndOtherFieldsKept() {
        BsonBinary a = new BsonBinary(UUID.randomUUID());
        BsonDocument withUid = new BsonDocument("id", a).append("uid", new BsonBinary(new byte[32]));
        BsonArray listed = BackendSessionIds.backendLsids(new BsonArray(List.of(new BsonDocument("id", a), withUid, new BsonInt32(1))), ALICE)
                .asArray();
        assertThat(listed.get(0).asDocument().get("id")).isEqualTo(BackendSessionIds.backendId(a, ALICE));
        assertThat(listed.get(1).asDocument().get("uid")).isEqualTo(withUid.get("uid"));
        assertThat(listed.get(1).asDocument().get("id")).isEqualTo(BackendSessionIds.backendId(a, ALICE));
        assertThat(listed.get(2)).isEqualTo(new BsonInt32(1));
        assertThat(BackendSessionIds.backendLsid(null, ALICE)).isNull();
    }
}
