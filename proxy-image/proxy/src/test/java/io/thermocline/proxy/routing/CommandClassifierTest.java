package io.thermocline.proxy.routing;

import static io.thermocline.proxy.routing.RoutingFixtures.TABLE;
import static io.thermocline.proxy.routing.RoutingFixtures.doc;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.thermocline.proxy.routing.CommandClass.WriteKind;
import java.util.List;
import java.util.stream.Stream;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CommandClassifierTest {

    static Arguments c(String name, String command, CommandClass expected) {
        return arguments(name, "shop", command, expected);
    }

    static CommandClass pass(String command, Reason reason) {
        return new CommandClass.PassThrough(command, reason);
    }

    static CommandClass rejected(String command, Reason reason, String mentions) {
        return new CommandClass.Rejected(command, reason, mentions);
    }

    static BsonArray array(String json) {
        return doc("{a: " + json + "}").getArray("a");
    }

    static List<BsonDocument> docs(String json) {
        return array(json).getValues().stream().map(v -> v.asDocument()).toList();
    }

    static Stream<Arguments> reads() {
        return Stream.of(
                c(
                        "findOnTieredNamespaceIsARead",
                        "{find: 'orders', filter: {s: 1}, limit: 5}",
                        new CommandClass.Read("find", "shop.orders", doc("{s: 1}"), null)),
                c(
                        "findWithoutFilterReadsEverything",
                        "{find: 'orders'}",
                        new CommandClass.Read("find", "shop.orders", new BsonDocument(), null)),
                c(
                        "findCarriesItsCollation",
                        "{find: 'orders', filter: {}, collation: {locale: 'en'}}",
                        new CommandClass.Read("find", "shop.orders", new BsonDocument(), doc("{locale: 'en'}"))),
                c(
                        "countIsAReadOfItsQuery",
                        "{count: 'orders', query: {s: 2}}",
                        new CommandClass.Read("count", "shop.orders", doc("{s: 2}"), null)),
                c(
                        "distinctIsAReadOfItsQuery",
                        "{distinct: 'orders', key: 's', query: {s: 3}}",
                        new CommandClass.Read("distinct", "shop.orders", doc("{s: 3}"), null)),
                c(
                        "inlineMapReduceOnTieredNamespaceIsAReadOfItsQuery",
                        "{mapReduce: 'orders', map: 'f', reduce: 'g', query: {s: 4}, out: {inline: 1}}",
                        new CommandClass.Read("mapReduce", "shop.orders", doc("{s: 4}"), null)),
                c(
                        "findOnUntieredNamespacePassesThrough",
                        "{find: 'customers', filter: {}}",
                        pass("find", Reason.UNTIERED_NAMESPACE)),
                arguments(
                        "sameCollectionNameInAnotherDatabaseIsUntiered",
                        "crm",
                        "{find: 'orders'}",
                        pass("find", Reason.UNTIERED_NAMESPACE)),
                c("findWithNonStringCollectionIsMalformed", "{find: 5}", pass("find", Reason.MALFORMED_COMMAND)),
                c(
                        "findWithNonDocumentFilterIsMalformed",
                        "{find: 'orders', filter: 3}",
                        pass("find", Reason.MALFORMED_COMMAND)),
                c(
                        "aggregateOnCollectionKeepsItsPipeline",
                        "{aggregate: 'orders', pipeline: [{$match: {s: 1}}], cursor: {}}",
                        new CommandClass.Aggregate("shop", "orders", array("[{$match: {s: 1}}]"))),
                c(
                        "aggregateOnUntieredCollectionIsStillRoutedByItsPipeline",
                        "{aggregate: 'customers', pipeline: [{$out: 'orders'}], cursor: {}}",
                        new CommandClass.Aggregate("shop", "customers", array("[{$out: 'orders'}]"))),
                c(
                        "aggregateOnDatabaseHasNoCollection",
                        "{aggregate: 1, pipeline: [{$documents: []}], cursor: {}}",
                        new CommandClass.Aggregate("shop", null, array("[{$documents: []}]"))),
                c(
                        "aggregateWithExplainFlagIsAnExplain",
                        "{aggregate: 'orders', pipeline: [], explain: true}",
                        new CommandClass.Explain(
                                new CommandClass.Aggregate("shop", "orders", new BsonArray()),
                                doc("{aggregate: 'orders', pipeline: [], explain: true}"),
                                "queryPlanner")),
                c(
                        "aggregateWithoutPipelineIsMalformed",
                        "{aggregate: 'orders', cursor: {}}",
                        pass("aggregate", Reason.MALFORMED_COMMAND)));
    }

    static Stream<Arguments> writes() {
        return Stream.of(
                c(
                        "insertIsAWriteOfItsDocuments",
                        "{insert: 'orders', documents: [{_id: 1}, {_id: 2}], ordered: true}",
                        new CommandClass.Write(
                                "insert", "shop.orders", WriteKind.INSERT, docs("[{_id: 1}, {_id: 2}]"))),
                c(
                        "updateIsAWriteOfItsStatements",
                        "{update: 'orders', updates: [{q: {_id: 1}, u: {$set: {s: 1}}}]}",
                        new CommandClass.Write(
                                "update", "shop.orders", WriteKind.UPDATE, docs("[{q: {_id: 1}, u: {$set: {s: 1}}}]"))),
                c(
                        "deleteIsAWriteOfItsStatements",
                        "{delete: 'orders', deletes: [{q: {s: 1}, limit: 0}]}",
                        new CommandClass.Write(
                                "delete", "shop.orders", WriteKind.DELETE, docs("[{q: {s: 1}, limit: 0}]"))),
                c(
                        "findAndModifyIsAWriteOfTheWholeCommand",
                        "{findAndModify: 'orders', query: {_id: 1}, remove: true}",
                        new CommandClass.Write(
                                "findAndModify",
                                "shop.orders",
                                WriteKind.FIND_AND_MODIFY,
                                docs("[{findAndModify: 'orders', query: {_id: 1}, remove: true}]"))),
                c(
                        "legacyFindandmodifySpellingIsRecognised",
                        "{findandmodify: 'orders', query: {_id: 1}, remove: true}",
                        new CommandClass.Write(
                                "findAndModify",
                                "shop.orders",
                                WriteKind.FIND_AND_MODIFY,
                                docs("[{findandmodify: 'orders', query: {_id: 1}, remove: true}]"))),
                c(
                        "insertIntoUntieredNamespacePassesThrough",
                        "{insert: 'customers', documents: [{_id: 1}]}",
                        pass("insert", Reason.UNTIERED_NAMESPACE)),
                c(
                        "findAndModifyOnUntieredNamespacePassesThrough",
                        "{findAndModify: 'customers', query: {}, remove: true}",
                        pass("findAndModify", Reason.UNTIERED_NAMESPACE)),
                c(
                        "insertWithNonDocumentStatementIsMalformed",
                        "{insert: 'orders', documents: [1]}",
                        pass("insert", Reason.MALFORMED_COMMAND)),
                c("updateWithoutStatementsIsMalformed", "{update: 'orders'}", pass("update", Reason.MALFORMED_COMMAND)),
                c(
                        "bulkWriteTouchingTieredNamespaceIsRejected",
                        "{bulkWrite: 1, ops: [], nsInfo: [{ns: 'crm.people'}, {ns: 'shop.orders'}]}",
                        rejected("bulkWrite", Reason.UNKNOWN_COMMAND, "shop.orders")),
                c(
                        "bulkWriteOnUntieredNamespacesPassesThrough",
                        "{bulkWrite: 1, ops: [], nsInfo: [{ns: 'crm.people'}]}",
                        pass("bulkWrite", Reason.UNTIERED_NAMESPACE)));
    }

    static Stream<Arguments> everythingElse() {
        return Stream.of(
                c(
                        "getMoreIsServedByTheCursorOwner",
                        "{getMore: {$numberLong: '42'}, collection: 'orders'}",
                        new CommandClass.CursorOwned("getMore", "shop.orders", List.of(42L))),
                c(
                        "getMoreOnUntieredNamespaceIsStillServedByTheCursorOwner",
                        "{getMore: {$numberLong: '7'}, collection: 'customers'}",
                        new CommandClass.CursorOwned("getMore", "shop.customers", List.of(7L))),
                c(
                        "killCursorsIsServedByTheCursorOwners",
                        "{killCursors: 'orders', cursors: [{$numberLong: '1'}, {$numberLong: '2'}]}",
                        new CommandClass.CursorOwned("killCursors", "shop.orders", List.of(1L, 2L))),
                c(
                        "getMoreWithoutCollectionIsMalformed",
                        "{getMore: {$numberLong: '42'}}",
                        pass("getMore", Reason.MALFORMED_COMMAND)),
                c(
                        "createIndexesOnTieredNamespaceAppliesToBothTiers",
                        "{createIndexes: 'orders', indexes: [{key: {s: 1}, name: 's_1'}]}",
                        new CommandClass.Ddl("createIndexes", List.of("shop.orders"))),
                c(
                        "dropIndexesOnTieredNamespaceAppliesToBothTiers",
                        "{dropIndexes: 'orders', index: 's_1'}",
                        new CommandClass.Ddl("dropIndexes", List.of("shop.orders"))),
                c(
                        "collModOnTieredNamespaceAppliesToBothTiers",
                        "{collMod: 'events', validator: {}}",
                        new CommandClass.Ddl("collMod", List.of("shop.events"))),
                c(
                        "dropOfTieredNamespaceAppliesToBothTiers",
                        "{drop: 'orders'}",
                        new CommandClass.Ddl("drop", List.of("shop.orders"))),
                c(
                        "createOfTieredNamespaceAppliesToBothTiers",
                        "{create: 'audit'}",
                        new CommandClass.Ddl("create", List.of("shop.audit"))),
                c(
                        "createIndexesOnUntieredNamespacePassesThrough",
                        "{createIndexes: 'customers', indexes: []}",
                        pass("createIndexes", Reason.UNTIERED_NAMESPACE)),
                c(
                        "dropDatabaseWithTieredCollectionsAppliesToBothTiers",
                        "{dropDatabase: 1}",
                        new CommandClass.Ddl("dropDatabase", List.of("shop.audit", "shop.events", "shop.orders"))),
                arguments(
                        "dropDatabaseWithoutTieredCollectionsPassesThrough",
                        "crm",
                        "{dropDatabase: 1}",
                        pass("dropDatabase", Reason.UNTIERED_NAMESPACE)),
                arguments(
                        "renameOfTieredNamespaceIsRejected",
                        "admin",
                        "{renameCollection: 'shop.orders', to: 'shop.orders_old'}",
                        rejected("renameCollection", Reason.RENAME_OF_TIERED_NAMESPACE, "shop.orders")),
                arguments(
                        "renameIntoTieredNamespaceIsRejected",
                        "admin",
                        "{renameCollection: 'shop.tmp', to: 'shop.events'}",
                        rejected("renameCollection", Reason.RENAME_OF_TIERED_NAMESPACE, "shop.events")),
                arguments(
                        "renameBetweenUntieredNamespacesPassesThrough",
                        "admin",
                        "{renameCollection: 'crm.a', to: 'crm.b'}",
                        pass("renameCollection", Reason.UNTIERED_NAMESPACE)),
                c(
                        "convertToCappedOfTieredNamespaceIsRejected",
                        "{convertToCapped: 'orders', size: 100}",
                        rejected("convertToCapped", Reason.DDL_ON_TIERED_NAMESPACE, "shop.orders")),
                c(
                        "cloneAsCappedIntoTieredNamespaceIsRejected",
                        "{cloneCollectionAsCapped: 'customers', toCollection: 'orders', size: 1}",
                        rejected("cloneCollectionAsCapped", Reason.DDL_ON_TIERED_NAMESPACE, "shop.orders")),
                c(
                        "mapReduceIntoTieredNamespaceIsRejected",
                        "{mapReduce: 'customers', map: 'f', reduce: 'g', out: {merge: 'orders'}}",
                        rejected("mapReduce", Reason.OUTPUT_TO_TIERED_NAMESPACE, "shop.orders")),
                c(
                        "mapReduceIntoUntieredNamespaceRunsOnArchive",
                        "{mapReduce: 'orders', map: 'f', reduce: 'g', out: 'report'}",
                        pass("mapReduce", Reason.OUTPUT_TO_UNTIERED_NAMESPACE)),
                c("helloIsAnsweredByTheProxy", "{hello: 1}", new CommandClass.Admin("hello", Destination.PROXY)),
                c(
                        "legacyIsmasterIsAnsweredByTheProxy",
                        "{ismaster: 1}",
                        new CommandClass.Admin("isMaster", Destination.PROXY)),
                c("pingIsAnsweredByTheProxy", "{ping: 1}", new CommandClass.Admin("ping", Destination.PROXY)),
                c(
                        "saslStartIsForTheProxyToDecide",
                        "{saslStart: 1, mechanism: 'SCRAM-SHA-256'}",
                        new CommandClass.Admin("saslStart", Destination.PROXY)),
                c(
                        "serverStatusDescribesBothTiers",
                        "{serverStatus: 1}",
                        new CommandClass.Admin("serverStatus", Destination.BOTH_TIERS)),
                c(
                        "currentOpListsBothTiers",
                        "{currentOp: 1}",
                        new CommandClass.Admin("currentOp", Destination.BOTH_TIERS)),
                c(
                        "replSetGetStatusShowsBothTiersMembers",
                        "{replSetGetStatus: 1}",
                        new CommandClass.Admin("replSetGetStatus", Destination.BOTH_TIERS)),
                c(
                        "killOpGoesToTheTierItsOpIdNames",
                        "{killOp: 1, op: 'fast:12'}",
                        new CommandClass.Admin("killOp", Destination.BOTH_TIERS)),
                c(
                        "listDatabasesGoesToTheArchive",
                        "{listDatabases: 1}",
                        new CommandClass.Admin("listDatabases", Destination.ARCHIVE)),
                c(
                        "legacyBuildinfoGoesToTheArchive",
                        "{buildinfo: 1}",
                        new CommandClass.Admin("buildInfo", Destination.ARCHIVE)),
                c(
                        "listIndexesOfTieredNamespaceGoesToTheArchive",
                        "{listIndexes: 'orders'}",
                        new CommandClass.Admin("listIndexes", Destination.ARCHIVE)),
                c("endSessionsIsASessionCommand", "{endSessions: [{id: 1}]}", new CommandClass.Session("endSessions")),
                c(
                        "killAllSessionsIsASessionCommand",
                        "{killAllSessions: []}",
                        new CommandClass.Session("killAllSessions")),
                c(
                        "commitTransactionEndsTheTransaction",
                        "{commitTransaction: 1}",
                        new CommandClass.TransactionEnd("commitTransaction")),
                c(
                        "abortTransactionEndsTheTransaction",
                        "{abortTransaction: 1}",
                        new CommandClass.TransactionEnd("abortTransaction")),
                c(
                        "explainWrapsTheClassifiedCommand",
                        "{explain: {find: 'orders', filter: {s: 1}}, verbosity: 'queryPlanner'}",
                        new CommandClass.Explain(
                                new CommandClass.Read("find", "shop.orders", doc("{s: 1}"), null),
                                doc("{find: 'orders', filter: {s: 1}}"),
                                "queryPlanner")),
                c(
                        "explainDefaultsToAllPlansExecution",
                        "{explain: {count: 'customers'}}",
                        new CommandClass.Explain(
                                pass("count", Reason.UNTIERED_NAMESPACE),
                                doc("{count: 'customers'}"),
                                "allPlansExecution")),
                c(
                        "explainOfExplainIsMalformed",
                        "{explain: {explain: {find: 'orders'}}}",
                        pass("explain", Reason.MALFORMED_COMMAND)),
                c(
                        "unknownCommandPassesThroughToTheArchive",
                        "{frobnicate: 1}",
                        pass("frobnicate", Reason.UNKNOWN_COMMAND)),
                c("emptyCommandIsMalformed", "{}", pass("", Reason.MALFORMED_COMMAND)),
                arguments(
                        "databaseIsReadFromTheCommandWhenNotGiven",
                        null,
                        "{find: 'orders', $db: 'shop'}",
                        new CommandClass.Read("find", "shop.orders", new BsonDocument(), null)),
                arguments(
                        "commandWithoutAnyDatabaseIsMalformed",
                        null,
                        "{find: 'orders'}",
                        pass("find", Reason.MALFORMED_COMMAND)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource({"reads", "writes", "everythingElse"})
    void classifies(String name, String database, String command, CommandClass expected) {
        CommandClass actual = CommandClassifier.classify(doc(command), database, TABLE);
        if (expected instanceof CommandClass.Rejected rejected) {
            assertThat(actual).isInstanceOf(CommandClass.Rejected.class);
            CommandClass.Rejected got = (CommandClass.Rejected) actual;
            assertThat(got.commandName()).isEqualTo(rejected.commandName());
            assertThat(got.reason()).isEqualTo(rejected.reason());
            assertThat(got.message()).contains(rejected.message());
        } else {
            assertThat(actual).isEqualTo(expected);
        }
    }
}
