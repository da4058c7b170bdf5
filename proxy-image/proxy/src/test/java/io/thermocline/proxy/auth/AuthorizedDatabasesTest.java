package io.thermocline.proxy.auth;

import io.thermocline.security.UserName;
import io.thermocline.security.authentication.StoredUser;
import io.thermocline.security.roles.Privileges;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class AuthorizedDatabasesTest {
    private static StoredUser user(String privileges) {
        return new StoredUser(new UserName("u", "admin"), Map.of(), List.of(),
                Privileges.fromArray(BsonArray.parse(privileges)));
    }

    private static final StoredUser READER = user("[{resource: {db: 'shop', collection: ''}, actions: ['find']}]");
    private static final StoredUser LISTER = user("[{resource: {cluster: true}, actions: ['listDatabases']}]");

    @Test
    void eachUserGetsWhatMongodWouldList() {
        assertThat(AuthorizedDatabases.of(null, BsonDocument.parse("{listDatabases: 1}"))).isInstanceOf(AuthorizedDatabases.All.class);
        assertThat(AuthorizedDatabases.of(READER, BsonDocument.parse("{listDatabases: 1}"))).isInstanceOf(AuthorizedDatabases.Only.class);
        assertThat(AuthorizedDatabases.of(READER, BsonDocument.parse("{listDatabases: 1, authorizedDatabases: false}")))
                .isInstanceOf(AuthorizedDatabases.Refused.class);
        assertThat(AuthorizedDatabases.of(LISTER, BsonDocument.parse("{listDatabases: 1}"))).isInstanceOf(AuthorizedDatabases.All.class);
        assertThat(AuthorizedDatabases.of(LISTER, BsonDocument.parse("{listDatabases: 1, authorizedDatabases: false}")))
                .isInstanceOf(AuthorizedDatabases.All.class);
        assertThat(AuthorizedDatabases.of(LISTER, BsonDocument.parse("{listDatabases: 1, authorizedDatabases: true}")))
                .isInstanceOf(AuthorizedDatabases.Only.class);
    }

    @Test
    void theFilteredReplyKeepsNamedDatabasesAndTheirTotalSize() {
        RawBsonDocument reply = RawBsonDocument.parse("{databases: [{name: 'admin', sizeOnDisk: 4096, empty: false},"
                + " {name: 'shop', sizeOnDisk: 8192, empty: false}, {name: 'crm', sizeOnDisk: 1024, empty: false}],"
                + " totalSize: 13312, totalSizeMb: 0, ok: 1.0}");
        BsonDocument out = AuthorizedDatabases.filter(reply, READER.privileges());
        assertThat(out.getArray("databases")).extracting(d -> d.asDocument().getString("name").getValue()).containsExactly("shop");
        assertThat(out.getNumber("totalSize").longValue()).isEqualTo(8192);
        assertThat(out.getDouble("ok").getValue()).isEqualTo(1.0);
        BsonDocument namesOnly = AuthorizedDatabases.filter(RawBsonDocument.parse("{databases: [{name: 'crm'}, {name: 'shop'}], ok: 1.0}"),
                READER.privileges());
        assertThat(namesOnly.getArray("databases")).hasSize(1);
        assertThat(namesOnly.containsKey("totalSize")).isFalse();
    }
}
