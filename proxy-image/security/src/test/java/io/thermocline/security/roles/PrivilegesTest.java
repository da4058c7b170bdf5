package io.thermocline.security.roles;

import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class PrivilegesTest {

    @ParameterizedTest(name = "{0} names {1}: {2}")
    @CsvSource(delimiter = '|', value = {
            "{db: 'shop', collection: ''}       | shop   | true",
            "{db: 'shop', collection: ''}       | crm    | false",
            "{db: 'shop', collection: 'orders'} | shop   | true",
            "{db: 'shop', collection: 'orders'} | crm    | false",
            "{db: '', collection: 'orders'}     | crm    | true",
            "{db: '', collection: ''}           | crm    | true",
            "{db: '', collection: ''}           | local  | false",
            "{db: '', collection: ''}           | config | false",
            "{anyResource: true}                | local  | true",
            "{cluster: true}                    | admin  | false",
    })
    void aDatabaseIsListedForAnyPrivilegeThatNamesItOrSomethingInIt(String resource, String db, boolean listed) {
        Privileges p = Privileges.of(BsonDocument.parse("{resource: " + resource + ", actions: ['find']}"));
        assertThat(p.anyOnDatabase(db)).isEqualTo(listed);
    }
}
