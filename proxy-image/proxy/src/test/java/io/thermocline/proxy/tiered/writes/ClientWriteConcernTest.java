package io.thermocline.proxy.tiered.writes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import com.mongodb.WriteConcern;
import io.thermocline.proxy.command.MongoError;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which client write concerns mongod refuses when it parses a command (and with which code), and what the commit uses. */
class ClientWriteConcernTest {

    static Stream<Arguments> writeConcerns() {
        return Stream.of(
                arguments("{}", null),
                arguments("{writeConcern: {}}", null),
                arguments("{writeConcern: {w: 0}}", null),
                arguments("{writeConcern: {w: 50}}", null),
                arguments("{writeConcern: {w: 'majority', j: true, wtimeout: 100}}", null),
                arguments("{writeConcern: {w: 'anyTag'}}", null), // unknown only to the replica set, while waiting
                arguments("{writeConcern: {w: {dc: 2}}}", null),
                arguments("{writeConcern: {w: null}}", null),
                arguments("{writeConcern: {wtimeout: 'x'}}", null), // mongod takes it as no timeout
                arguments("{writeConcern: {j: 1, fsync: 0}}", null),
                arguments(
                        "{writeConcern: {w: 1, wOpTime: 1, wElectionId: 1, getLastError: 1, provenance: 'clientSupplied'}}",
                        null),
                arguments("{writeConcern: {w: -1}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {w: 51}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {w: NumberLong('4294967297')}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {w: false}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {w: [1]}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {w: {}}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {w: {dc: {n: 1}}}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {j: true, fsync: 1}}", MongoError.FAILED_TO_PARSE),
                arguments("{writeConcern: {j: 'yes'}}", MongoError.TYPE_MISMATCH),
                arguments("{writeConcern: {fsync: {}}}", MongoError.TYPE_MISMATCH),
                arguments("{writeConcern: 'majority'}", MongoError.TYPE_MISMATCH),
                arguments("{writeConcern: 1}", MongoError.TYPE_MISMATCH),
                arguments("{writeConcern: {w: 1, timeout: 5}}", MongoError.UNKNOWN_FIELD));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("writeConcerns")
    void refusesWhatMongodRefusesWhenItParsesTheCommand(String command, MongoError refused) {
        assertThat(ClientWriteConcern.refusal(BsonDocument.parse(command))
                        .map(ClientWriteConcern.Refusal::error)
                        .orElse(null))
                .isEqualTo(refused);
    }

    static Stream<Arguments> commits() {
        return Stream.of(
                arguments("{}", WriteConcern.MAJORITY),
                arguments("{writeConcern: {w: 1}}", WriteConcern.MAJORITY),
                arguments("{writeConcern: {w: 1, j: 1}}", WriteConcern.MAJORITY.withJournal(true)),
                arguments("{writeConcern: {w: 3, j: 0, wtimeout: 'x'}}", new WriteConcern(3).withJournal(false)),
                arguments(
                        "{writeConcern: {w: 'majority', wtimeout: 250}}",
                        WriteConcern.MAJORITY.withWTimeout(250, TimeUnit.MILLISECONDS)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("commits")
    void commitsWithTheClientsWriteConcernOrTheFloor(String command, WriteConcern commit) {
        assertThat(ClientWriteConcern.of(BsonDocument.parse(command)).commit()).isEqualTo(commit);
    }
}
